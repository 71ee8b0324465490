"""Run HDeepRM's decision system against a real Batsim, through PyBatsim.

:class:`PyBatsimAdapter` is a PyBatsim scheduler: PyBatsim's ``Batsim`` network
loop sets its ``bs`` attribute and calls its ``on*`` callbacks, and it

* implements :class:`~hdeeprm.simulation.port.SimulatorPort` on top of
  ``bs`` (EXECUTE_JOB, REJECT_JOB, KILL_JOB, SET_RESOURCE_STATE,
  CALL_ME_LATER), so the workload manager commands Batsim exactly as it
  commands the embedded engine;
* maps PyBatsim jobs (``"w0!42"``) to the :class:`~hdeeprm.workload.model.Job`
  objects of a :class:`~hdeeprm.workload.model.Workload` by id;
* calls ``on_batch(now, submitted, completed)`` once per Batsim message
  (PyBatsim's ``onNoMoreEvents``) that submitted or ended a job or carried a
  REQUESTED_CALL: JOB_SUBMITTED jobs in message order, then JOB_COMPLETED /
  JOB_KILLED jobs in message order (Batsim sends them in start order, see
  ``docs/engine.rst``, "Same-instant event order").

The adapter only needs PyBatsim's duck-typed scheduler interface, so it does
not subclass ``BatsimScheduler`` and this module imports without PyBatsim.
:func:`run_with_batsim` imports PyBatsim (:func:`load_pybatsim`), starts a
``batsim`` binary (or ``hdeeprm-batsim``, the embedded engine behind the same
command line) on a free loopback port and runs the adapter in-process.
Protocol reference: https://batsim.readthedocs.io/en/latest/protocol.html.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procset import ProcSet

from hdeeprm.errors import HDeepRMError, ProtocolError, SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation.port import BatchCallback, SimulatorPort
from hdeeprm.workload.model import DELAY, Job, Workload

#: Install lines for PyBatsim 3.2.1 on Python 3.11 (its pyzmq<23 pin does not build there).
PYBATSIM_INSTALL = ('pip install "pyzmq>=25" "procset>=1.0,<2" "sortedcontainers>=2.3,<3" '
                    '"docopt>=0.6.2,<0.7" && pip install --no-deps pybatsim==3.2.1')

#: ``on_batch_factory(port) -> on_batch``: builds the decision system once the
#: simulation has begun, given the port it must command.
BatchCallbackFactory = Callable[[SimulatorPort], BatchCallback]


def load_pybatsim() -> type:
    """PyBatsim's ``Batsim`` class (the network loop), imported on first use.

    Returns:
        ``batsim.batsim.Batsim``.

    Raises:
        HDeepRMError: PyBatsim (or one of its dependencies) cannot be imported;
            the message gives :data:`PYBATSIM_INSTALL`, the import error is the cause.
    """
    try:
        from batsim.batsim import Batsim
    except ImportError as exc:
        raise HDeepRMError(f"pybatsim cannot be imported ({exc}); install it with: "
                           f"{PYBATSIM_INSTALL}") from exc
    return Batsim


#: PyBatsim callbacks of Batsim events HDeepRM does not handle → the event's name. Batsim
#: 4.2.1 sends none of them for the inputs HDeepRM writes (no external events, no job
#: messages); if one comes, :class:`PyBatsimAdapter` raises a ProtocolError naming it.
UNSUPPORTED_CALLBACKS = {
    "onJobMessage": "FROM_JOB_MSG", "onAddResources": "ADD_RESOURCES",
    "onRemoveResources": "REMOVE_RESOURCES",
    "onNotifyEventMachineUnavailable": "NOTIFY event_machine_unavailable",
    "onNotifyEventMachineAvailable": "NOTIFY event_machine_available",
    "onNotifyGenericEvent": "an unknown NOTIFY",
}


class PyBatsimAdapter:
    """A PyBatsim scheduler that forwards Batsim events to an HDeepRM decision system.

    Implements :class:`~hdeeprm.simulation.port.SimulatorPort`. PyBatsim's
    ``Batsim(adapter, endpoint, timeout_ms)`` sets :attr:`bs` and calls the
    ``on*`` methods; the adapter never imports PyBatsim itself.

    Args:
        workload: The workload given to Batsim (same job ids and workload name).
        on_batch_factory: Called once at SIMULATION_BEGINS with the adapter (the
            port); returns the ``on_batch(now, submitted, completed)`` callback.
        hosts: The platform's hosts in Batsim id order, to estimate the progress of
            ``parallel_homogeneous`` jobs and check the host count; optional.
        is_alive: Tells whether Batsim still runs, checked when a reply is late.

    Attributes:
        bs: PyBatsim's ``Batsim`` object (set by it; ``None`` before).
        workload: The workload Batsim runs.
        on_batch: The callback, built at SIMULATION_BEGINS (``None`` before).
        start_time: Job index → start time in seconds (jobs started by this adapter).
        finish_time: Job index → end time in seconds (from JOB_COMPLETED / JOB_KILLED).
        final_state: Job index → Batsim final state name (``"COMPLETED_SUCCESSFULLY"``…).
        rejected: Job index → reason given to :meth:`reject_job`.
        consumed_energy: Last ANSWER to a ``consumed_energy`` QUERY, in joules (NaN if none).
        nb_batches: Number of ``on_batch`` calls.
        ended: Whether SIMULATION_ENDS was received.
    """

    def __init__(self, workload: Workload, on_batch_factory: BatchCallbackFactory, *,
                 hosts: Sequence[HostSpec] | None = None,
                 is_alive: Callable[[], bool] | None = None) -> None:
        self.bs: Any = None
        self.workload = workload
        self._factory = on_batch_factory
        self._hosts = tuple(hosts) if hosts is not None else None
        self._pstate = [h.initial_pstate for h in hosts] if hosts is not None else None
        self._is_alive = is_alive
        self._by_id = {j.id: j for j in workload.jobs}
        self.on_batch: BatchCallback | None = None
        self._submitted: list[Job] = []
        self._completed: list[Job] = []
        self._called = False
        self._calls: list[float] = []
        self._alloc: dict[int, tuple[int, ...]] = {}
        self.start_time: dict[int, float] = {}
        self.finish_time: dict[int, float] = {}
        self.final_state: dict[int, str] = {}
        self.rejected: dict[int, str] = {}
        self.consumed_energy = float("nan")
        self.nb_batches = 0
        self.ended = False

    # ---------------------------------------------------------------- SimulatorPort
    @property
    def now(self) -> float:
        """Current simulated time in seconds (the ``now`` of the message being answered)."""
        return float(self.bs.time())

    def _pyjob(self, job: Job) -> Any:
        full = f"{self.workload.name}!{job.id}"
        try:
            return self.bs.jobs[full]
        except KeyError:
            raise SimulationError(f"job {full!r} was not submitted by Batsim") from None

    def execute_job(self, job: Job, hosts: Sequence[int]) -> None:
        """Start ``job`` now on host ids ``hosts`` (EXECUTE_JOB).

        Args:
            job: A job Batsim has submitted.
            hosts: Batsim resource ids, as many as ``job.res``.

        Raises:
            SimulationError: Batsim has not submitted ``job``.
        """
        pyjob = self._pyjob(job)
        alloc = tuple(int(h) for h in hosts)
        pyjob.allocation = ProcSet(*alloc)
        self.bs.execute_job(pyjob)
        self.start_time[job.index] = self.now
        self._alloc[job.index] = alloc

    def reject_job(self, job: Job, reason: str) -> None:
        """Reject a submitted job (REJECT_JOB).

        Args:
            job: A job Batsim has submitted and that has not started.
            reason: Why; Batsim does not record it, so it is kept in :attr:`rejected`.

        Raises:
            SimulationError: Batsim has not submitted ``job``.
        """
        self.bs.reject_jobs([self._pyjob(job)])
        self.rejected[job.index] = str(reason)

    def kill_job(self, job: Job) -> None:
        """Kill a running job (KILL_JOB); it comes back in a later batch's ``completed``.

        Args:
            job: A running job.

        Raises:
            SimulationError: Batsim has not submitted ``job``.
        """
        self.bs.kill_jobs([self._pyjob(job)])

    def set_pstate(self, hosts: Sequence[int], pstate: int) -> None:
        """Switch hosts to another computation pstate (SET_RESOURCE_STATE).

        Args:
            hosts: Batsim resource ids.
            pstate: Index into each host's pstate table (its ``speeds``).
        """
        hosts = [int(h) for h in hosts]
        self.bs.set_resource_state(ProcSet(*hosts), int(pstate))
        if self._pstate is not None:
            for h in hosts:
                self._pstate[h] = int(pstate)

    def call_me_later(self, when: float) -> None:
        """Ask Batsim for a REQUESTED_CALL (CALL_ME_LATER).

        Args:
            when: Simulated time of the call, in seconds.
        """
        self.bs.wake_me_up_at(float(when))
        self._calls.append(float(when))

    def progress(self, job: Job) -> float:
        """Estimated fraction of a job's work done, in [0, 1].

        Batsim does not report the progress of running jobs, so this is elapsed
        time over the expected duration in seconds: the ``delay`` of a ``delay``
        profile; for ``parallel_homogeneous``, ``cpu`` (FLOP) over the slowest
        allocated host's speed (FLOP/s) at its *current* pstate when the hosts
        were given, else the walltime. Earlier pstate changes are not
        integrated.

        Args:
            job: Any job of :attr:`workload`.

        Returns:
            1.0 for finished jobs, 0.0 before the start, else the estimate.
        """
        i = job.index
        if i in self.finish_time:
            return 1.0
        start = self.start_time.get(i)
        if start is None:
            return 0.0
        if job.profile.type == DELAY:
            duration = job.profile.delay
        elif self._hosts is not None:
            speed = min(self._hosts[h].speeds[self._pstate[h]] for h in self._alloc[i])
            duration = job.profile.cpu / speed if speed > 0 else float("inf")
        else:
            duration = job.walltime
        if not duration or duration <= 0:
            return 0.0 if duration != 0 else 1.0
        return min(1.0, max(0.0, (self.now - start) / duration))

    def has_pending_events(self) -> bool:
        """Whether Batsim may still send events: jobs to submit or running, or a call pending."""
        now = self.now
        self._calls = [c for c in self._calls if c > now]
        running = len(self.start_time) > len(self.finish_time)
        return not self.bs.no_more_static_jobs or running or bool(self._calls)

    # ---------------------------------------------------------------- PyBatsim callbacks (its names)
    def _job(self, pyjob: Any) -> Job:
        wl, _, jid = pyjob.id.partition("!")
        job = self._by_id.get(jid) if wl == self.workload.name else None
        if job is None:
            raise ProtocolError(f"Batsim submitted job {pyjob.id!r}, which is not in "
                                f"workload {self.workload.name!r} ({self.workload.source})")
        return job

    def onAfterBatsimInit(self) -> None:
        """PyBatsim has read SIMULATION_BEGINS; nothing to do."""

    def onBeforeEvents(self) -> None:
        """A Batsim message arrived; its events follow."""

    def onSimulationBegins(self) -> None:
        """SIMULATION_BEGINS: check the host count and build the decision system.

        Raises:
            ProtocolError: Batsim's number of compute resources differs from ``hosts``.
        """
        if self._hosts is not None and self.bs.nb_compute_resources != len(self._hosts):
            raise ProtocolError(f"Batsim has {self.bs.nb_compute_resources} compute "
                                f"resources, the HDeepRM platform {len(self._hosts)}")
        self.on_batch = self._factory(self)

    def onJobSubmission(self, pyjob: Any) -> None:
        """JOB_SUBMITTED: queue the job for this message's batch.

        Args:
            pyjob: PyBatsim's job (``id`` is ``"workload!job id"``).

        Raises:
            ProtocolError: The job is not in :attr:`workload`.
        """
        self._submitted.append(self._job(pyjob))

    def onJobCompletion(self, pyjob: Any) -> None:
        """JOB_COMPLETED: record the end time and final state.

        Args:
            pyjob: PyBatsim's job (``finish_time`` in seconds, ``job_state``).

        Raises:
            ProtocolError: The job is not in :attr:`workload`.
        """
        job = self._job(pyjob)
        self.finish_time[job.index] = float(pyjob.finish_time)
        self.final_state[job.index] = pyjob.job_state.name
        self._completed.append(job)

    def onJobsKilled(self, pyjobs: Sequence[Any]) -> None:
        """JOB_KILLED: the jobs end now with COMPLETED_KILLED.

        Args:
            pyjobs: PyBatsim's jobs that were really killed.

        Raises:
            ProtocolError: A job is not in :attr:`workload`.
        """
        now = self.now
        for pyjob in pyjobs:
            job = self._job(pyjob)
            self.finish_time[job.index] = now
            self.final_state[job.index] = "COMPLETED_KILLED"
            self._completed.append(job)

    def onMachinePStateChanged(self, nodeid: Any, pstate: Any) -> None:
        """RESOURCE_STATE_CHANGED: the acknowledgement of our own SET_RESOURCE_STATE.

        Args:
            nodeid: ``(first, last)`` resource ids of one interval.
            pstate: The new pstate (a string).
        """

    def onRequestedCall(self) -> None:
        """REQUESTED_CALL: this message's batch is passed on even if it has no job event."""
        self._called = True

    def onReportEnergyConsumed(self, consumed_energy: float) -> None:
        """ANSWER to a QUERY: keep the platform energy.

        Args:
            consumed_energy: Energy of the compute hosts since t = 0, in joules.
        """
        self.consumed_energy = float(consumed_energy)

    def onNoMoreJobsInWorkloads(self) -> None:
        """NOTIFY no_more_static_job_to_submit (PyBatsim records it in ``bs.no_more_static_jobs``)."""

    def onNoMoreExternalEvents(self) -> None:
        """NOTIFY no_more_external_event_to_occur: nothing to do."""

    def onSimulationEnds(self) -> None:
        """SIMULATION_ENDS: sets :attr:`ended`."""
        self.ended = True

    def onDeadlock(self) -> None:
        """PyBatsim's receive timed out: keep waiting while Batsim runs.

        Raises:
            SimulationError: The Batsim process has stopped.
        """
        if self._is_alive is not None and not self._is_alive():
            raise SimulationError("Batsim stopped before the end of the simulation")

    def onNoMoreEvents(self) -> None:
        """End of a Batsim message: call ``on_batch`` if it submitted, ended or called."""
        if not (self._submitted or self._completed or self._called):
            return
        submitted, completed = self._submitted, self._completed
        self._submitted, self._completed, self._called = [], [], False
        self.nb_batches += 1
        self.on_batch(self.now, submitted, completed)

    def __getattr__(self, name: str) -> Any:
        """PyBatsim callbacks of the events in :data:`UNSUPPORTED_CALLBACKS` raise a ProtocolError.

        Raises:
            ProtocolError: When such a callback is called, naming the Batsim event.
            AttributeError: For any other missing attribute.
        """
        event = UNSUPPORTED_CALLBACKS.get(name)
        if event is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def unsupported(*args: Any) -> None:
            raise ProtocolError(f"Batsim sent {event}, which HDeepRM's decision system does not "
                                f"handle (no dynamic resources, job messages or external events)")
        return unsupported


def free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 right now.

    Returns:
        The port number, chosen by the OS (another process may take it before it is used).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_batsim(batsim: str | os.PathLike = "batsim") -> str:
    """Absolute path of the Batsim binary to run.

    Args:
        batsim: A command name looked up on PATH (``"batsim"``, ``"hdeeprm-batsim"``) or a path.

    Returns:
        The executable's path.

    Raises:
        HDeepRMError: Not found or not executable.
    """
    text = os.fspath(batsim)
    found = shutil.which(text)
    if found is None:
        if text == "batsim":
            raise HDeepRMError("no `batsim` binary found on PATH; install Batsim 4.2.1 or pass "
                               "--batsim PATH")
        raise HDeepRMError(f"batsim binary {text!r} not found or not executable; install Batsim "
                           f"4.2.1 or pass --batsim PATH")
    return found


@dataclass
class BatsimRun:
    """What :func:`run_with_batsim` returns.

    Attributes:
        scheduler: The :class:`PyBatsimAdapter` that ran (its ``final_state``,
            ``start_time``, ``finish_time`` by job index).
        outdir: Folder of Batsim's outputs (``out_jobs.csv``, ``out_schedule.csv``…).
        command: The Batsim command line that was run.
        log: File with Batsim's stdout and stderr.
        wall_time: Wall-clock seconds of the run.
    """

    scheduler: PyBatsimAdapter
    outdir: Path
    command: list[str]
    log: Path
    wall_time: float


def run_with_batsim(workload: Workload, platform_xml: str | os.PathLike,
                    workload_json: str | os.PathLike, on_batch_factory: BatchCallbackFactory, *,
                    batsim: str | os.PathLike = "batsim", outdir: str | os.PathLike,
                    energy: bool = True, hosts: Sequence[HostSpec] | None = None,
                    timeout: float = 3600.0) -> BatsimRun:
    """Simulate ``workload`` with a Batsim binary and an HDeepRM decision system.

    Starts ``batsim -p platform_xml -w workload_json -s tcp://127.0.0.1:PORT
    -e OUTDIR/out [-E]`` (PORT a free loopback port) as a subprocess and runs
    PyBatsim's loop over a :class:`PyBatsimAdapter` in this process (in a
    helper thread, while this thread watches the subprocess).

    Args:
        workload: The jobs of ``workload_json`` as HDeepRM objects (same ids).
        platform_xml: SimGrid platform for Batsim (``-p``).
        workload_json: Batsim workload (``-w``).
        on_batch_factory: See :class:`PyBatsimAdapter`.
        batsim: ``"batsim"`` (looked up on PATH), another command such as
            ``"hdeeprm-batsim"``, or a path.
        outdir: Folder for Batsim's outputs and its log ``batsim.log`` (created).
        energy: Pass ``-E`` (energy plugin; hosts need ``wattage_per_state``).
        hosts: The platform's hosts in id order (better progress estimates).
        timeout: Seconds the whole run may take before it is stopped.

    Returns:
        A :class:`BatsimRun`.

    Raises:
        HDeepRMError: PyBatsim missing (with the install line), no Batsim binary,
            Batsim failed (its log's tail is quoted), or the run took longer than ``timeout``.
        ProtocolError, SimulationError: From the adapter (see its methods).
        Exception: Anything ``on_batch`` raises, unchanged.
    """
    batsim_loop = load_pybatsim()
    binary = find_batsim(batsim)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    command = [binary, "-p", os.fspath(platform_xml), "-w", os.fspath(workload_json),
               "-s", endpoint, "-e", os.fspath(out / "out")]
    if energy:
        command.append("-E")
    log_path = out / "batsim.log"
    t0 = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    adapter = PyBatsimAdapter(workload, on_batch_factory, hosts=hosts,
                              is_alive=lambda: proc.poll() is None)
    failure: list[BaseException] = []

    def loop() -> None:
        try:
            batsim_loop(adapter, endpoint, 1000).start()
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)

    thread = threading.Thread(target=loop, name="pybatsim", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.05)
            if thread.is_alive() and proc.poll() not in (None, 0):
                raise HDeepRMError(f"Batsim failed (exit code {proc.returncode}): "
                                   f"{_tail(log_path)} (command: {' '.join(command)})")
            if time.perf_counter() - t0 > timeout:
                raise HDeepRMError(f"the Batsim run took more than {timeout} s; stopped")
        if failure:
            raise failure[0]
        try:
            code = proc.wait(timeout=max(1.0, timeout - (time.perf_counter() - t0)))
        except subprocess.TimeoutExpired:
            raise HDeepRMError("Batsim did not exit after SIMULATION_ENDS") from None
        if code != 0:
            raise HDeepRMError(f"Batsim failed (exit code {code}): {_tail(log_path)} "
                               f"(command: {' '.join(command)})")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return BatsimRun(adapter, out, command, log_path, time.perf_counter() - t0)


def _tail(path: Path, n: int = 5) -> str:
    lines = path.read_text(errors="replace").strip().splitlines()
    return " | ".join(lines[-n:]) if lines else "(empty log)"
