"""Running HDeepRM: one episode, the launcher, the Batsim path and the pre-flight checks.

:mod:`~hdeeprm.run.loop` is the one decide -> apply -> reward step;
:mod:`~hdeeprm.run.episode` couples the embedded engine and the workload
manager; :mod:`~hdeeprm.run.launch` is ``hdeeprm-launch`` as a library;
:mod:`~hdeeprm.run.batsim` runs the same decision system against a real
Batsim; :mod:`~hdeeprm.run.check` is ``hdeeprm-check``; :mod:`~hdeeprm.run.evaluate`
is ``hdeeprm-evaluate`` (policies compared on windows of a trace).
"""
