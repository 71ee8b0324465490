"""Writers of Batsim 4.2.1 output files from a :class:`~hdeeprm.simulation.engine.SimulationResult`.

The layouts follow Batsim 4.2.1 byte for byte where the golden runs pin them down
(``docs/engine.rst``, "Output files"; https://batsim.readthedocs.io/en/latest/output-jobs.html).
Stretch, slowdown and consumed energy use the definitions of :mod:`hdeeprm.outputs.metrics`:

* ``<prefix>_jobs.csv``: one row per job in the order jobs reached their final state, numbers
  ``%f``, ``allocated_resources`` as a Batsim interval set ("0-3 7", :class:`procset.ProcSet`).
  Batsim's ``requested_time`` column is the walltime (``-1.000000`` when none).
  **Rejected jobs** (REJECT_JOB) also get a row, written at their rejection time: success 0,
  final_state ``REJECTED``, starting_time ``-1.000000``, execution_time ``0.000000``,
  finish_time = rejection time, waiting and turnaround time = rejection − submission time,
  stretch ``-1.000000``, empty allocated_resources, consumed_energy ``-1.000000`` and the
  rejection reason (CSV-quoted) in ``metadata``. Other jobs have metadata ``""``.
  Jobs killed by KILL_JOB are ``COMPLETED_KILLED`` rows with their real times.
  A run with a GPU model (a mixed CPU + GPU run, a timed GPU replay) adds
  :data:`GPU_JOB_COLUMNS` after Batsim's: ``allocated_gpus`` (global GPU ids, node-major,
  as an interval set; empty for a job that held none) and ``gpu_milli`` (the share of each
  GPU it asked for, 0 for a job asking for none); CPU-only runs keep Batsim's columns.
* ``<prefix>_schedule.csv``: one row of totals, columns in alphabetical order (see
  :func:`schedule_totals`).
* ``<prefix>_machine_states.csv``: a row after every job start, job end and pstate switch
  (``%g`` times); there are no sleeping or switching hosts in this model.
* ``<prefix>_pstate_changes.csv`` (energy only): the initial pstates at time 0 (one row per
  distinct initial pstate), then two rows per SET_RESOURCE_STATE: ``-1`` then the new pstate.
* ``<prefix>_consumed_energy.csv`` (energy only), **simplified**: ``energy`` is the exact
  integral of the power from t = 0 (without SimGrid's initial-pstate quirk, so it can be lower
  than Batsim's by the pstate-0 minus initial-pstate power times the first submission time);
  ``epower`` is the average power since the previous row (since t = 0 for the first row) and
  ``NA`` whenever no time elapsed (Batsim sometimes prints an instantaneous value there).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from hdeeprm.simulation.energy import host_runs
from hdeeprm.simulation.runs import HostRuns
from hdeeprm.simulation.engine import SimulationResult
from hdeeprm.outputs.metrics import KILLED_STATES, RAN_STATES, job_slowdown, slowdown
from hdeeprm.simulation.kernel import consumed_joules
from hdeeprm.workload.model import Job, JobState

#: Version string written in ``batsim_version``: the Batsim output format these files follow.
BATSIM_FORMAT_VERSION = "4.2.1"

JOBS_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
               "requested_time,success,final_state,starting_time,execution_time,finish_time,"
               "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata")
#: Extra columns of ``out_jobs.csv`` after Batsim's in a run with a GPU model (:func:`gpu_job_cells`).
GPU_JOB_COLUMNS = ("allocated_gpus", "gpu_milli")
#: The header of ``out_jobs.csv`` in a run with a GPU model.
GPU_JOBS_HEADER = JOBS_HEADER + "," + ",".join(GPU_JOB_COLUMNS)
MACHINE_STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
PSTATE_CHANGES_HEADER = "time,machine_id,new_pstate"
CONSUMED_ENERGY_HEADER = "time,energy,event_type,wattmin,epower"
SCHEDULE_COLUMNS = (
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished",
    "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
    "scheduling_time", "simulation_time", "success_rate", "time_computing", "time_idle",
    "time_sleeping", "time_switching_off", "time_switching_on", "time_unavailable")


def interval_set(hosts) -> str:
    """Batsim's interval-set text of host ids, e.g. ``[7, 0, 1, 2, 3] -> "0-3 7"``.

    The same text as ``str(procset.ProcSet(*hosts))``, built from sorted runs
    (ProcSet merges ids one by one, far slower on long outputs). Texts of up to 64 hosts are
    cached (a bounded cache): the same small host groups switch pstate again and again.

    Args:
        hosts: Host ids (ints, any order, duplicates allowed).
    """
    hosts = hosts if isinstance(hosts, tuple) else tuple(hosts)
    if len(hosts) <= 64:
        return _interval_set(hosts)
    starts, ends = host_runs(hosts)
    return " ".join(f"{s}-{e}" if e != s else str(s) for s, e in zip(starts, ends))


def distinct_interval_set(hosts) -> str:
    """:func:`interval_set` of distinct host ids (not checked): one run of consecutive ids is written at once.

    Args:
        hosts: Distinct host ids (ints, any order, or a :class:`~hdeeprm.simulation.runs.HostRuns`), e.g. a job's
            allocation or a pstate switch's hosts.
    """
    if type(hosts) is HostRuns:
        return hosts.text()
    if not hosts:
        return ""
    lo, hi = min(hosts), max(hosts)
    if hi - lo + 1 == len(hosts):   # distinct ids: exactly lo..hi
        return f"{lo}-{hi}" if hi != lo else str(lo)
    return interval_set(hosts)


def ascending_interval_set(hosts) -> str:
    """:func:`interval_set` of distinct host ids in ascending order (not checked), e.g. the manager's switches.

    Args:
        hosts: Distinct host ids, ascending, at least one.
    """
    if type(hosts) is HostRuns:
        return hosts.text()
    lo, hi = hosts[0], hosts[-1]
    if hi - lo + 1 == len(hosts):
        return f"{lo}-{hi}" if hi != lo else str(lo)
    return interval_set(hosts)


@functools.lru_cache(maxsize=1 << 14)
def _interval_set(hosts: tuple[int, ...]) -> str:
    """:func:`interval_set` of a tuple (cached)."""
    ids = sorted(set(hosts))
    if not ids:
        return ""
    parts = []
    start = prev = ids[0]
    for h in ids[1:]:
        if h != prev + 1:
            parts.append(f"{start}-{prev}" if prev != start else str(start))
            start = h
        prev = h
    parts.append(f"{start}-{prev}" if prev != start else str(start))
    return " ".join(parts)


def _csv_quote(text: str) -> str:
    """Quote a CSV field the way Batsim writes metadata: ``"..."`` with inner quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def _write_lines(path: str | os.PathLike, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write("\n".join(lines))
        out.write("\n")


def job_row(job: Job, name: str, state: JobState, start: float, finish: float,
            allocation: tuple[int, ...] | None, energy: float, reason: str = "") -> str:
    """One row of ``out_jobs.csv`` (without the newline), see the module docstring.

    Args:
        job: The job.
        name: Workload name.
        state: Its final state.
        start: Starting time (s; ignored for a rejected job).
        finish: Finish time (s; the rejection time for a rejected job).
        allocation: Its host ids (None for a rejected job).
        energy: Energy of its hosts (J), NaN without energy.
        reason: Rejection reason (rejected jobs only).
    """
    return format_job_row(job.id, name, job.profile.name, job.subtime, job.res, job.walltime, state, start, finish,
                          None if allocation is None else distinct_interval_set(allocation), energy, reason)


#: ``out_jobs.csv`` row of a job that ran, as a %-format (numbers ``%f``, other fields ``%s``).
_JOB_ROW = '%s,%s,%s,%f,%s,%f,%s,%s,%f,%f,%f,%f,%f,%f,%s,%f,""'


def format_job_row(job_id: str, name: str, profile: str, sub: float, res: int, walltime: float, state: JobState,
                   start: float, finish: float, allocation: str | None, energy: float, reason: str = "") -> str:
    """One row of ``out_jobs.csv`` from its fields: the one writer of Batsim's job rows (CPU and GPU runs).

    Args:
        job_id, name, profile: The job's id, workload name and profile name.
        sub: Submission time (s).
        res: Requested resources (cores; GPUs in a GPU run).
        walltime: Requested time (s), -1 for none.
        state: Its final state.
        start: Starting time (s; ignored for a rejected job).
        finish: Finish time (s; the rejection time for a rejected job).
        allocation: Its resources as an interval set (None for a rejected job).
        energy: Its energy (J), NaN without energy.
        reason: Rejection reason (rejected jobs only).
    """
    if state is JobState.REJECTED:
        t = finish
        return (f"{job_id},{name},{profile},{sub:f},{res},{walltime:f},0,"
                f"REJECTED,{-1.0:f},{0.0:f},{t:f},{t - sub:f},{t - sub:f},{-1.0:f},,"
                f"{-1.0:f},{_csv_quote(reason)}")
    run = finish - start
    turnaround = finish - sub
    stretch = job_slowdown(turnaround, run)   # one definition of the stretch
    if energy != energy:
        energy = -1.0
    success = 1 if state is JobState.COMPLETED_SUCCESSFULLY else 0
    # One %-format of the whole row: the same text as f-strings' ``:f`` and ``{}``, in two thirds of the time.
    return _JOB_ROW % (job_id, name, profile, sub, res, walltime, success, state.value, start, run, finish,
                       start - sub, turnaround, stretch, allocation, energy)


def gpu_job_cells(gpu, job: int) -> str:
    """The :data:`GPU_JOB_COLUMNS` cells of one job's ``out_jobs.csv`` row (without the leading comma).

    Args:
        gpu: The run's :class:`~hdeeprm.simulation.results.GpuUsage` (its placements may still be filling in).
        job: Job index.

    Returns:
        ``"<GPU ids as an interval set>,<gpu_milli>"``, e.g. ``"8-11,1000"``; ``",0"`` for a job asking for no GPU.
    """
    return f"{interval_set(gpu.gpu_ids(job))},{int(gpu.jobs.gpu_milli[job])}"


def write_jobs_csv(path: str | os.PathLike, result: SimulationResult) -> None:
    """Write Batsim's ``out_jobs.csv``: one row per finished or rejected job.

    With a GPU part (``result.gpu``, a mixed CPU + GPU run) each row ends with :func:`gpu_job_cells`.

    Args:
        path: Output file.
        result: The simulation result.
    """
    jobs = result.workload.jobs
    name = result.workload.name
    start, finish, energy = result.start_time.tolist(), result.finish_time.tolist(), result.consumed_energy.tolist()
    gpu = result.gpu
    lines = [JOBS_HEADER if gpu is None else GPU_JOBS_HEADER]
    lines.extend(job_row(jobs[i], name, result.state[i], start[i], finish[i], result.allocation[i], energy[i],
                         result.reasons.get(i, "")) + ("" if gpu is None else "," + gpu_job_cells(gpu, i))
                 for i in result.completion_order)
    _write_lines(path, lines)


def schedule_totals(result: SimulationResult) -> dict[str, object]:
    """Compute the totals of ``out_schedule.csv`` (Batsim 4.2.1 definitions, :func:`batsim_totals`).

    The machines are the hosts (each host's busy time and last job end as the engine kept them);
    ``consumed_joules`` = :func:`~hdeeprm.simulation.kernel.consumed_joules` (0 without energy).

    Args:
        result: The simulation result.

    Returns:
        Column name → value (str, int or float), in :data:`SCHEDULE_COLUMNS` order.
    """
    states = result.state
    ended = [i for i in result.completion_order if states[i] in RAN_STATES]
    jobs = result.workload.jobs
    joules = 0.0
    if result.energy and ended:
        joules = consumed_joules(result.first_submission_energy, result.last_completion_energy)
    return batsim_totals(result, ended, [jobs[i].res for i in ended], result.host_busy, result.host_last_end,
                         len(result.host_names), joules)


def batsim_totals(result: SimulationResult, ended: list[int], sizes: list[int], busy: np.ndarray,
                  last_end: np.ndarray, nb_machines: int, joules: float) -> dict[str, object]:
    """The totals of ``out_schedule.csv`` over any kind of machine (hosts, or the GPUs of a GPU run).

    Means and maxima are over the jobs that ran to an end (success, walltime kill or KILL_JOB), in
    completion order, ``slowdown`` being Batsim's stretch (turnaround / execution time).
    ``nb_jobs`` counts every submitted job, ``nb_jobs_finished`` the jobs that ran to an end,
    ``nb_jobs_killed`` walltime kills plus KILL_JOB kills, ``nb_jobs_rejected`` REJECT_JOBs;
    ``success_rate`` = nb_jobs_success / nb_jobs. ``time_computing`` = Σ over jobs of machines ×
    execution time; ``time_idle`` = Σ over machines that ran a job of (end of the machine's last job −
    its busy time) (``docs/engine.rst``, "Output files"). ``makespan`` = last job end.

    Args:
        result: The simulation result (states, times, switch counters, wall-clock times).
        ended: Indices of the jobs that ran to an end, in completion order.
        sizes: Machines each of them held.
        busy: Seconds each machine ran jobs, float64 (nb_machines,).
        last_end: End of each machine's last job in seconds, -inf for one that ran none, float64 (nb_machines,).
        nb_machines: ``nb_computing_machines``.
        joules: ``consumed_joules``.

    Returns:
        Column name → value (str, int or float), in :data:`SCHEDULE_COLUMNS` order.
    """
    states = result.state
    if ended:
        idx = np.array(ended, dtype=np.intp)
        jobs = result.workload.jobs
        sub = np.array([jobs[i].subtime for i in ended])
        start, finish = result.start_time[idx], result.finish_time[idx]
        run = finish - start
        wait = start - sub
        turnaround = finish - sub
        stretch = slowdown(turnaround, run)
        used = np.isfinite(last_end)
        time_idle = float((last_end[used] - busy[used]).sum())
        time_computing = float((run * np.array(sizes, dtype=np.intp)).sum())
        makespan = float(finish.max())
        stats = (float(stretch.max()), float(turnaround.max()), float(wait.max()),
                 float(stretch.mean()), float(turnaround.mean()), float(wait.mean()))
    else:
        time_idle = time_computing = makespan = 0.0
        stats = (0.0,) * 6
    nb_success = sum(1 for s in states if s is JobState.COMPLETED_SUCCESSFULLY)
    nb_killed = sum(1 for s in states if s in KILLED_STATES)
    nb_rejected = sum(1 for s in states if s is JobState.REJECTED)
    nb_jobs = sum(1 for s in states if s is not JobState.NOT_SUBMITTED)
    values = [BATSIM_FORMAT_VERSION, joules, makespan, *stats, nb_machines,
              result.nb_grouped_switches, nb_jobs, len(ended), nb_killed, nb_rejected, nb_success,
              result.nb_machine_switches, result.scheduling_time, result.simulation_time,
              nb_success / nb_jobs if nb_jobs else 0.0, time_computing, time_idle, 0.0, 0.0, 0.0, 0.0]
    return dict(zip(SCHEDULE_COLUMNS, values))


def schedule_cells(totals: dict[str, object]) -> list[str]:
    """The two lines of ``out_schedule.csv`` (header, values: ints as they are, floats ``%f``)."""
    cells = [v if isinstance(v, str) else (str(v) if isinstance(v, int) else f"{v:f}")
             for v in totals.values()]
    return [",".join(totals), ",".join(cells)]


def write_schedule_csv(path: str | os.PathLike, result: SimulationResult) -> None:
    """Write Batsim's ``out_schedule.csv`` (header + one row, floats ``%f``).

    Args:
        path: Output file.
        result: The simulation result.
    """
    _write_lines(path, schedule_cells(schedule_totals(result)))


def write_machine_states_csv(path: str | os.PathLike, result: SimulationResult) -> None:
    """Write Batsim's ``out_machine_states.csv`` (times ``%g``, one row per change).

    Args:
        path: Output file.
        result: The simulation result (needs ``record=True`` for rows).
    """
    lines = [MACHINE_STATES_HEADER]
    lines.extend(machine_state_row(t, idle, computing) for t, idle, computing in result.machine_states)
    _write_lines(path, lines)


def machine_state_row(t: float, idle: int, computing: int) -> str:
    """One row of ``out_machine_states.csv``: time (s), idle and computing hosts."""
    return f"{t:g},0,0,0,{idle},{computing}"


def initial_pstate_rows(initial: np.ndarray) -> list[str]:
    """The time-0 rows of ``out_pstate_changes.csv``: one per distinct initial pstate.

    Args:
        initial: Pstate of each host at t = 0, int (nb_hosts,).
    """
    return [f"0,{interval_set(np.flatnonzero(initial == p).tolist())},{int(p)}" for p in np.unique(initial)]


def pstate_row(t: float, hosts: tuple[int, ...], pstate: int) -> str:
    """One row of ``out_pstate_changes.csv``: time (s), host ids, new pstate (-1: switching)."""
    return f"{_pstate_prefix(t, hosts)}{pstate}"


def _pstate_prefix(t: float, hosts: tuple[int, ...]) -> str:
    """``time,machine_id,`` of a pstate-change row."""
    return f"{t:g},{distinct_interval_set(hosts)},"


def pstate_rows(t: float, hosts: tuple[int, ...], pstate: int) -> str:
    """The two rows of one pstate switch (``-1`` then ``pstate``), each ended by a newline."""
    text = _pstate_prefix(t, hosts)
    return f"{text}-1\n{text}{pstate}\n"


class EnergyRows:
    """Rows of ``out_consumed_energy.csv``, one after the other (see the module docstring).

    Each row's ``epower`` needs the time and energy of the previous row, kept here (0, 0 before
    the first). The ``time,energy,`` text of the last row and the last ``wattmin`` text are
    reused while they do not change (every pstate switch writes rows at one instant and energy).
    """

    __slots__ = ("_t", "_e", "_head", "_wattmin", "_wattmin_text", "_text_t", "_t_text")

    def __init__(self) -> None:
        self._t = self._e = 0.0
        self._head = ""
        self._wattmin = self._wattmin_text = None
        self._text_t, self._t_text = None, ""   # the last time written and its ``%f,`` text

    def row(self, t: float, e: float, kind: str, wattmin: float) -> str:
        """The next row, newline included.

        Numbers are written with ``%``-formats, the same text as ``f"{x:f}"`` (one C conversion), faster.

        Args:
            t: Time (s), not before the previous row's.
            e: Platform energy since t = 0 (J).
            kind: ``'s'``, ``'e'`` or ``'p'``.
            wattmin: Sum of the hosts' Idle wattages (W).
        """
        if t == self._t and e == self._e and self._head:
            head, epower = self._head, "NA"
        else:
            dt = t - self._t
            epower = "%f" % ((e - self._e) / dt) if dt > 0 else "NA"
            if t != self._text_t:
                self._text_t, self._t_text = t, "%f," % t
            head = self._head = "%s%f," % (self._t_text, e)
            self._t, self._e = t, e
        if wattmin != self._wattmin:
            self._wattmin, self._wattmin_text = wattmin, "%f" % wattmin
        return f"{head}{kind},{self._wattmin_text},{epower}\n"

    def again(self, kind: str, wattmin: float) -> str:
        """The next row when it has the last row's time and energy (``epower`` NA), newline included.

        Args:
            kind: ``'s'``, ``'e'`` or ``'p'``.
            wattmin: Sum of the hosts' Idle wattages (W).
        """
        if wattmin != self._wattmin:
            self._wattmin, self._wattmin_text = wattmin, "%f" % wattmin
        return f"{self._head}{kind},{self._wattmin_text},NA\n"


def write_pstate_changes_csv(path: str | os.PathLike, result: SimulationResult) -> None:
    """Write Batsim's ``out_pstate_changes.csv`` (times ``%g``, hosts as interval sets).

    Args:
        path: Output file.
        result: The simulation result (needs ``record=True`` for the rows after the first).
    """
    lines = [PSTATE_CHANGES_HEADER, *initial_pstate_rows(result.initial_pstates)]
    lines.extend(pstate_row(t, hosts, p) for t, hosts, p in result.pstate_changes)
    _write_lines(path, lines)


def write_consumed_energy_csv(path: str | os.PathLike, result: SimulationResult) -> None:
    """Write a simplified Batsim ``out_consumed_energy.csv`` (see the module docstring).

    Args:
        path: Output file.
        result: The simulation result (needs ``energy=True`` and ``record=True`` for rows).
    """
    rows = EnergyRows()
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(CONSUMED_ENERGY_HEADER + "\n")
        out.writelines(rows.row(t, e, kind, wattmin) for t, e, kind, wattmin in result.energy_log)


def write_outputs(outdir: str | os.PathLike, result: SimulationResult,
                  prefix: str = "out", streamed: bool = False) -> list[Path]:
    """Write every Batsim output file of a run into ``outdir`` (created if needed).

    Without energy (Batsim without ``-E``) the pstate and energy files are not written.

    Args:
        outdir: Output directory.
        result: The simulation result.
        prefix: File name prefix (Batsim's ``-e``), e.g. ``out`` → ``out_jobs.csv``.
        streamed: The run wrote its jobs, machine-state, pstate and energy files as it went
            (:class:`hdeeprm.outputs.stream.CsvStream`): only ``out_schedule.csv`` is written
            (the paths of all of them are returned).

    Returns:
        The paths written.
    """
    base = Path(outdir)
    base.mkdir(parents=True, exist_ok=True)
    writers = [("jobs", write_jobs_csv), ("schedule", write_schedule_csv),
               ("machine_states", write_machine_states_csv)]
    if result.energy:
        writers += [("pstate_changes", write_pstate_changes_csv),
                    ("consumed_energy", write_consumed_energy_csv)]
    paths = []
    for suffix, writer in writers:
        path = base / f"{prefix}_{suffix}.csv"
        if writer is write_schedule_csv or not streamed:
            writer(path, result)
        paths.append(path)
    return paths
