"""Windows of one SWF trace, read once: the workload of any window without reading the trace again.

Training on random windows of a long trace (RLScheduler's SchedGym draws a 256-job window of its trace at
every ``reset``) would otherwise parse the trace up to the window at every episode: for a window late in
SDSC-SP2 that is most of the 54,044 jobs, several times the cost of the episode itself. :class:`TraceWindows`
parses the trace once (:func:`~hdeeprm.workload.swf.iter_swf_chunks`) and converts each window from the
records in memory with the same rules and options as a run (:func:`~hdeeprm.workload.convert.records_to_workload`
with :func:`~hdeeprm.config.build.swf_conversion`)::

    windows = TraceWindows(options, hierarchy)
    env = JobSlotEnv(options, platform=hierarchy, workload=windows.workload(first_job=1000, nb_jobs=256))

``windows.workload(first, n)`` equals ``build_workload(options.replace(first_job=first, nb_jobs=n), hierarchy)``
job for job.
"""
from __future__ import annotations

import numpy as np

from hdeeprm.config.build import swf_conversion
from hdeeprm.config.options import Options
from hdeeprm.errors import OptionsError
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.convert import records_to_workload, skip_rules
from hdeeprm.workload.model import Workload
from hdeeprm.workload.swf import NB_FIELDS, iter_swf_chunks


class TraceWindows:
    """The options' SWF trace in memory, cut into windows on demand.

    Args:
        options: The run's options: ``workload_file_path`` (an SWF trace, plain or gzip) and the conversion
            options of its ``workload`` block (``seed``, ``actual_work``, ...); its ``first_job`` and ``nb_jobs``
            are not used (each window names its own).
        hierarchy: The platform (its cores and reference speed enter the conversion).

    Attributes:
        nb_records: Job lines of the trace (usable or not).

    Raises:
        OptionsError: no workload, a Batsim JSON workload, or a ``gpu_jobs`` block (windows are cut from SWF
            traces of CPU jobs only).
        WorkloadError: the trace is missing or malformed (file, line and field named).
    """

    def __init__(self, options: Options, hierarchy: ResourceHierarchy) -> None:
        path = options.workload_file_path
        if not path or path.lower().endswith(".json") or options.gpu_jobs is not None:
            raise OptionsError(f"trace windows are cut from an SWF trace (.swf, .swf.gz) of CPU jobs, got "
                               f"{path or 'no workload'}{' with a gpu_jobs block' if options.gpu_jobs else ''}",
                               path=options.source)
        self._source = path
        blocks = [values for values, _ in iter_swf_chunks(path)]
        self._records = np.concatenate(blocks) if blocks else np.empty((0, NB_FIELDS))
        self.nb_records = len(self._records)
        #: Row of each usable record, in trace order: a window's records are read from its span only.
        self._usable_rows = np.flatnonzero(skip_rules(self._records)[3])
        self._conversion = swf_conversion(options, hierarchy)
        self._profiles: dict = {}   # the profiles of the jobs converted so far, by amount: every window reuses them

    def workload(self, first_job: int = 0, nb_jobs: int | None = None) -> Workload:
        """The window of ``nb_jobs`` usable jobs after the first ``first_job`` (None: to the end).

        Returns:
            The same workload as :func:`~hdeeprm.config.build.build_workload` gives for those options.

        Raises:
            OptionsError: ``first_job`` < 0 or ``nb_jobs`` < 0.
        """
        rows = self._usable_rows
        if nb_jobs is None or not 0 <= first_job < first_job + nb_jobs <= len(rows):   # beyond the trace: as it is
            return records_to_workload([self._records], nb_jobs=nb_jobs, first_job=first_job, source=self._source,
                                       profiles=self._profiles, **self._conversion)
        # The window's span: from just after the last usable record passed over (the skipped records there
        # count in the window's report) to its own last usable record.
        start = int(rows[first_job - 1]) + 1 if first_job else 0
        end = int(rows[first_job + nb_jobs - 1]) + 1
        return records_to_workload([self._records[start:end]], nb_jobs=nb_jobs, source=self._source,
                                   profiles=self._profiles, **self._conversion)
