"""Configuration: the validated options of a run and the constructors they feed.

:class:`~hdeeprm.config.options.Options` holds every default once;
:mod:`hdeeprm.config.build` turns options into the platform, the workload
and the agent; :mod:`hdeeprm.config.trace_windows` reads an SWF trace once and
converts any window of it as :func:`~hdeeprm.config.build.build_workload` would.
"""
