"""Workloads: SWF traces and Batsim JSON workloads in, typed jobs out.

:mod:`~hdeeprm.workload.swf` reads and writes the Standard Workload Format,
:mod:`~hdeeprm.workload.convert` turns SWF records into a
:class:`~hdeeprm.workload.model.Workload` (with a report of every job skipped
or altered), :mod:`~hdeeprm.workload.batsim_json` reads and writes Batsim
JSON workloads, :mod:`~hdeeprm.workload.stats` describes traces and
:mod:`~hdeeprm.workload.generators` makes synthetic ones.

The other modules:

* :mod:`~hdeeprm.workload.datasets`: The public traces on demand: a registry of every trace the docs, examples,
  environments and benchmarks use (``pwa:KTH-SP2-1996-2.1-cln``, ``philly:derived``, ...), their resolution
  (user cache, then the shared folder) and ``hdeeprm-workload fetch`` (pooch, checksums verified).
* :mod:`~hdeeprm.workload.gpu_jobs`: Timed GPU jobs: the columnar :class:`GpuJobs` a timed GPU replay runs,
  built from the GPU traces.
* :mod:`~hdeeprm.workload.gpu_stats`: Statistics of a timed GPU workload, printed side by side for several
  workloads (``hdeeprm-workload gpu-stats``).
* :mod:`~hdeeprm.workload.openb`: The openb pod lists of the Alibaba GPU cluster trace v2023, read into
  columnar :class:`OpenbPods`.
* :mod:`~hdeeprm.workload.philly`: The Microsoft Philly GPU trace, one row per job, read into columnar
  :class:`PhillyJobs`.
* :mod:`~hdeeprm.workload.rlscheduler`: RLScheduler's reading of an SWF trace and its sampling of job windows.
"""
