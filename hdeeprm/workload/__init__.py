"""Workloads: SWF traces and Batsim JSON workloads in, typed jobs out.

:mod:`~hdeeprm.workload.swf` reads and writes the Standard Workload Format,
:mod:`~hdeeprm.workload.convert` turns SWF records into a
:class:`~hdeeprm.workload.model.Workload` (with a report of every job skipped
or altered), :mod:`~hdeeprm.workload.batsim_json` reads and writes Batsim
JSON workloads, :mod:`~hdeeprm.workload.stats` describes traces and
:mod:`~hdeeprm.workload.generators` makes synthetic ones.
"""
