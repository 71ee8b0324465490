"""What ``hdeeprm-batsim`` does: the embedded engine behind Batsim's command line, serving one decision process.

:func:`run_server` reads Batsim's inputs (SimGrid XML platform, Batsim JSON workload), serves the simulation over
Batsim's protocol (:mod:`hdeeprm.simulation.batsim.server`) and writes Batsim's output files
(:mod:`hdeeprm.outputs.batsim_csv`).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hdeeprm.outputs.batsim_csv import write_outputs
from hdeeprm.platform.simgrid_reader import DEFAULT_MASTER_HOST, read_simgrid_platform
from hdeeprm.simulation.batsim.server import DEFAULT_ENDPOINT, BatsimSession, serve, split_export_prefix
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.kernel import DEFAULT_CLOCK, warn_split_risks
from hdeeprm.workload.batsim_json import read_batsim_workload


def run_server(platform: str | Path, workload_path: str | Path, *,
               endpoint: str = DEFAULT_ENDPOINT, export: str | Path = "out",
               energy: bool = False, timeout: float | None = None,
               log: Callable[[str], None] | None = None, master_host: str = DEFAULT_MASTER_HOST,
               clock: str = DEFAULT_CLOCK) -> Any:
    """Read Batsim inputs, serve one simulation to a decision process, write Batsim outputs.

    The equivalent of ``batsim -p platform -w workload -s endpoint -e export [-E]``.

    Args:
        platform: SimGrid XML platform (Batsim ``-p``).
        workload_path: Batsim JSON workload (``-w``); profiles must be
            ``delay`` or ``parallel_homogeneous`` without communication.
        endpoint: Where the decision process listens (``-s``).
        export: Output prefix (``-e``): ``OUTDIR/out`` writes ``OUTDIR/out_jobs.csv``…
        energy: Simulate energy (``-E``); without it jobs' ``consumed_energy``
            is -1 and ``consumed_joules`` 0, as Batsim writes.
        timeout: Seconds to wait for each reply (``None`` = forever).
        log: Message logger, see :func:`~hdeeprm.simulation.batsim.server.serve`.
        master_host: The host given Batsim's ``master`` role (``-m``; Batsim's default ``master_host``).
        clock: How message times are sent, see :class:`~hdeeprm.simulation.batsim.server.BatsimSession` (``--clock``).

    Returns:
        The engine's ``result()`` (also written with
        :func:`hdeeprm.outputs.batsim_csv.write_outputs`).

    Raises:
        PlatformError, WorkloadError: Bad inputs (e.g. an unsupported profile type).
        ProtocolError, SimulationError: See :func:`serve`.
    """
    hosts = read_simgrid_platform(platform, master_host=master_host)
    workload = read_batsim_workload(workload_path)
    engine = Engine(hosts, workload, energy=energy, record=True)
    session = BatsimSession(engine, workload, hosts, workload_path=workload_path, energy=energy, clock=clock)
    serve(session, endpoint, timeout=timeout, log=log)
    warn_split_risks(engine.split_risks)
    result = engine.result()
    outdir, prefix = split_export_prefix(export)
    outdir.mkdir(parents=True, exist_ok=True)
    write_outputs(outdir, result, prefix=prefix)
    return result
