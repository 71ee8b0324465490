"""Configuration: the validated options of a run and the constructors they feed.

:class:`~hdeeprm.config.options.Options` holds every default once;
:mod:`hdeeprm.config.build` turns options into the platform, the workload
and the agent.
"""
