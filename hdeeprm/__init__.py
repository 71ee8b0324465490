"""HDeepRM: workload management for heterogeneous clusters with classic and deep-RL agents.

Public surface (import from here):

* running: :class:`~hdeeprm.run.episode.Episode`, :func:`~hdeeprm.config.options.load_options`
* platforms: :func:`~hdeeprm.platform.load_platform`, :class:`~hdeeprm.platform.hierarchy.ResourceHierarchy`
* workloads: :class:`~hdeeprm.workload.model.Workload`, :class:`~hdeeprm.workload.model.Job`
* agents: :class:`~hdeeprm.agents.base.Agent`, :class:`~hdeeprm.agents.base.ClassicAgent`
* errors: :class:`~hdeeprm.errors.HDeepRMError` and its subclasses

Importing this package prints nothing and does not import torch.
"""
__version__ = "0.3.0"
