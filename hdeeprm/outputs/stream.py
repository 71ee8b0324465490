"""Batsim-format outputs written while the simulation runs, in bounded memory.

A :class:`CsvStream` is a :class:`~hdeeprm.simulation.recording.Recorder` that writes every
row of ``out_jobs.csv``, ``out_machine_states.csv``, ``out_pstate_changes.csv`` and
``out_consumed_energy.csv`` the moment it happens, instead of keeping it: a replay of any length
then holds only its per-job arrays, and the engine drops each job's host list when the job ends.
The rows are the ones :mod:`hdeeprm.outputs.batsim_csv` writes from a finished run (the same
row functions), so both ways give byte-identical files; ``out_schedule.csv`` is written at the
end by :func:`hdeeprm.outputs.batsim_csv.write_outputs` with ``streamed=True``.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.compiled import path_name
from hdeeprm.outputs.batsim_csv import (CONSUMED_ENERGY_HEADER, GPU_JOBS_HEADER, JOBS_HEADER, MACHINE_STATES_HEADER,
                                        PSTATE_CHANGES_HEADER, EnergyRows, ascending_interval_set,
                                        distinct_interval_set, initial_pstate_rows,
                                        job_row, machine_state_row, pstate_rows)
from hdeeprm.files import open_for_writing
from hdeeprm.outputs.metrics import job_slowdown
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.recording import Recorder
from hdeeprm.workload.model import Job, JobState

try:
    from hdeeprm.outputs.rows_kernel import JobRows, StreamRows
except ImportError:   # the extension was not built: the pure-Python rows (same bytes)
    JobRows = StreamRows = None

#: Write buffer of each streamed file, bytes.
BUFFER = 1 << 20


def output_rows_path() -> str:
    """Which path makes the streamed rows in this install (``run.json`` and the benchmarks name it)."""
    return path_name(StreamRows, "rows_kernel")


class CsvStream(Recorder):
    """A recorder that streams the Batsim-format rows to open files (keeps no row).

    Build it with :meth:`open`, hand :meth:`factory` to the engine, :meth:`close` it at the end.

    Args:
        nb_hosts: Number of compute hosts.
        energy: The engine's energy account, or None without energy (then no pstate and energy
            files are written).
        files: ``{"jobs", "machine_states", "pstate_changes", "consumed_energy"}`` -> open text
            files, headers already written (the last two absent without energy).
        workload_name: Name written in the ``workload_name`` column of ``out_jobs.csv``.
        gpu_cells: In a run with a GPU model (files opened with ``gpu_columns``): job -> the
            :data:`~hdeeprm.outputs.batsim_csv.GPU_JOB_COLUMNS` cells of its row
            (:func:`~hdeeprm.outputs.batsim_csv.gpu_job_cells`); None otherwise.
    """

    streams = True

    def __init__(self, nb_hosts: int, energy: EnergyAccount | None, files: dict, workload_name: str,
                 gpu_cells: Callable[[Job], str] | None = None) -> None:
        super().__init__(nb_hosts, energy)
        self._files = files
        self._name = workload_name
        self._jobs = files["jobs"].write
        self._ms = files["machine_states"].write
        self._ps = files["pstate_changes"].write if energy is not None else None
        self._en = files["consumed_energy"].write if energy is not None else None
        self._rows = EnergyRows()
        self._energy_rows = self._rows.row
        self._ms_now, self._ms_busy, self._ms_text, self._tg = None, -1, "", ""
        if energy is not None and StreamRows is not None:   # the compiled rows (same bytes), bound over the methods
            rows = StreamRows(nb_hosts, energy, self._ms, self._ps, self._en, distinct_interval_set)
            self.job_started, self.job_ended, self.switching = rows.job_started, rows.job_ended, rows.switching
            self.switched, self.switched_groups = rows.switched, rows.switched_groups
        self._gpu_cells = gpu_cells
        if gpu_cells is None and JobRows is not None:
            self.job_finished = JobRows(workload_name, self._jobs, job_row, distinct_interval_set,
                                        job_slowdown, JobState.COMPLETED_SUCCESSFULLY, JobState.REJECTED).job_finished

    @staticmethod
    def open(outdir: str | os.PathLike, prefix: str, initial_pstates: np.ndarray, energy: bool,
             gpu_columns: bool = False) -> dict:
        """Create the streamed files in ``outdir`` and write their headers.

        Args:
            outdir: Output folder (created if needed).
            prefix: File name prefix, e.g. ``out`` -> ``out_jobs.csv``.
            initial_pstates: Pstate of each host at t = 0, int (nb_hosts,).
            energy: Whether energy is simulated (pstate and energy files).
            gpu_columns: Whether ``out_jobs.csv`` has the GPU columns (a run with a GPU model).

        Returns:
            The open files, for :class:`CsvStream` (close them with :meth:`close_files`).
        """
        base = Path(outdir)
        base.mkdir(parents=True, exist_ok=True)
        headers = {"jobs": [GPU_JOBS_HEADER if gpu_columns else JOBS_HEADER], "machine_states": [MACHINE_STATES_HEADER]}
        if energy:
            headers["pstate_changes"] = [PSTATE_CHANGES_HEADER, *initial_pstate_rows(initial_pstates)]
            headers["consumed_energy"] = [CONSUMED_ENERGY_HEADER]
        files = {}
        try:
            for name, lines in headers.items():
                f = files[name] = open_for_writing(base / f"{prefix}_{name}.csv", newline="\n",
                                                   buffering=BUFFER)   # a full disk names the file
                f.write("\n".join(lines) + "\n")
        except OSError:
            CsvStream.close_files(files)
            raise
        return files

    @staticmethod
    def close_files(files: dict) -> None:
        """Flush and close files opened by :meth:`open`: every one, even when one fails (a full disk).

        Raises:
            OSError: The first file that could not be flushed (the others are closed all the same).
        """
        failed = None
        for f in files.values():
            try:
                f.close()
            except OSError as error:
                failed = failed or error
        if failed is not None:
            raise failed

    def _energy_row(self, now: float, kind: str) -> None:
        account = self._energy
        self._en(self._energy_rows(now, account.energy(now), kind, account.wattmin))

    def _machine_state(self, now: float, nb_busy: int) -> str:
        """The ``out_machine_states.csv`` row (newline included), kept while time and load do not change.

        Its ``%g,`` time text (:func:`~hdeeprm.outputs.batsim_csv.machine_state_row`'s) is kept in
        :attr:`_tg` for the pstate rows of the same instant.
        """
        if now != self._ms_now or nb_busy != self._ms_busy:
            text = self._ms_text = machine_state_row(now, self._nb_hosts - nb_busy, nb_busy) + "\n"
            if now != self._ms_now:
                self._tg = text[:text.index(",") + 1]
            self._ms_now, self._ms_busy = now, nb_busy
        return self._ms_text

    def job_started(self, now: float, nb_busy: int) -> None:
        """See :meth:`Recorder.job_started`."""
        self._ms(self._machine_state(now, nb_busy))
        if self._en is not None:
            account = self._energy
            self._en(self._energy_rows(now, account.offset + account.power * now, "s", account.wattmin))

    def job_ended(self, now: float, nb_busy: int) -> None:
        """See :meth:`Recorder.job_ended`."""
        self._ms(self._machine_state(now, nb_busy))
        if self._en is not None:
            account = self._energy
            self._en(self._energy_rows(now, account.offset + account.power * now, "e", account.wattmin))

    def switching(self, now: float) -> None:
        """See :meth:`Recorder.switching`."""
        if self._en is not None:
            self._energy_row(now, "p")

    def switched(self, now: float, hosts: tuple[int, ...], pstate: int, nb_busy: int) -> None:
        """See :meth:`Recorder.switched`."""
        if self._ps is not None:
            self._ps(pstate_rows(now, hosts, pstate))
        self._ms(self._machine_state(now, nb_busy))
        if self._en is not None:
            self._energy_row(now, "p")

    def switched_groups(self, now: float, groups: Sequence[tuple[Sequence[int], int]], wattmins: Sequence[float],
                        nb_busy: int, ascending: bool = False) -> None:
        """See :meth:`Recorder.switched_groups`: every row of a pstate switch, written at once."""
        text = ascending_interval_set if ascending else distinct_interval_set
        ms = self._machine_state(now, nb_busy)
        if self._en is None:
            self._ms(ms * len(groups))
            return
        account, rows = self._energy, self._rows
        first = rows.row(now, account.offset + account.power * now, "p", wattmins[0])
        again, t = rows.again, self._tg
        if len(groups) == 1:
            hosts, pstate = groups[0]
            head = f"{t}{text(hosts)},"
            self._ps(f"{head}-1\n{head}{pstate}\n")
            self._ms(ms)
            self._en(first + again("p", wattmins[1]))
            return
        self._ms(ms * len(groups))
        parts = []
        for hosts, pstate in groups:
            head = f"{t}{text(hosts)},"
            parts.append(f"{head}-1\n{head}{pstate}\n")
        self._ps("".join(parts))
        parts = [first, again("p", wattmins[1])]
        for k in range(1, len(groups)):
            w = again("p", wattmins[k])   # the wattmin after group k - 1 is the one before group k
            parts.append(w)
            parts.append(again("p", wattmins[k + 1]))
        self._en("".join(parts))

    def job_finished(self, job: Job, state: JobState, start: float, finish: float,
                     allocation: tuple[int, ...] | None, energy: float, reason: str) -> None:
        """See :meth:`Recorder.job_finished`: its ``out_jobs.csv`` row, now (with its GPU cells in a GPU run)."""
        row = job_row(job, self._name, state, start, finish, allocation, energy, reason)
        if self._gpu_cells is not None:
            row = f"{row},{self._gpu_cells(job)}"
        self._jobs(row + "\n")
