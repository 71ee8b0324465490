"""``hdeeprm-batsim``: the embedded engine behind Batsim's command line and protocol.

Usage (Batsim 4.2.1's own flags, so scripts written for ``batsim`` work)::

    hdeeprm-batsim -p platform.xml -w workload.json [-s tcp://127.0.0.1:28000]
                   [-e OUTDIR/out] [-E] [-v quiet|network-only|information|debug]
                   [--timeout SECONDS] [--clock exact|batsim]

Start the decision process first (e.g. ``pybatsim easyBackfill -s tcp://127.0.0.1:28000``):
like Batsim, this program *connects* to the endpoint the scheduler binds.
Decisions take effect at ``max(clock, their timestamp)`` and the next message waits for the
reply's ``now``, as in Batsim (PyBatsim's ``consume_time`` is honoured); ``--clock batsim``
also prints message times with 6 decimals, as Batsim does (docs/engine.rst, "Protocol clock").
Exit codes: 0 done, 1 the simulation failed (bad decision, protocol error), 2 bad input.
"""
from __future__ import annotations

import argparse
import sys

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.platform.simgrid_reader import DEFAULT_MASTER_HOST
from hdeeprm.simulation.batsim.server import DEFAULT_ENDPOINT
from hdeeprm.simulation.kernel import CLOCKS, DEFAULT_CLOCK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-batsim`` (Batsim 4.2.1's flags; ``--timeout`` in seconds).

    Returns:
        The parser; it exits with code 2 on a bad command line.
    """
    p = argparse.ArgumentParser(
        prog="hdeeprm-batsim",
        description="Serve a simulation of HDeepRM's embedded engine to a Batsim decision process "
                    "(e.g. a PyBatsim scheduler) over Batsim's 4.x ZeroMQ protocol, and write "
                    "Batsim's output files. Computation-only profiles: delay, "
                    "parallel_homogeneous with com = 0.")
    p.add_argument("-p", "--platform", required=True, help="SimGrid XML platform file")
    p.add_argument("-m", "--master-host", default=DEFAULT_MASTER_HOST,
                   help=f"host that gets Batsim's 'master' role (default {DEFAULT_MASTER_HOST})")
    p.add_argument("-w", "--workload", required=True, action="append",
                   help="Batsim JSON workload file (exactly one)")
    p.add_argument("-s", "--socket-endpoint", default=DEFAULT_ENDPOINT,
                   help=f"endpoint the decision process binds (default {DEFAULT_ENDPOINT})")
    p.add_argument("-e", "--export", default="out",
                   help="output prefix: OUTDIR/out writes OUTDIR/out_jobs.csv, ... (default out)")
    p.add_argument("-E", "--energy", action="store_true",
                   help="simulate energy (host wattage_per_state); without it consumed_energy is -1")
    p.add_argument("-v", "--verbosity", default="information",
                   choices=("quiet", "network-only", "information", "debug"),
                   help="network-only/debug print every protocol message to stderr")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds to wait for each reply of the decision process (default: forever)")
    p.add_argument("--clock", default=DEFAULT_CLOCK, choices=CLOCKS,
                   help="message times sent exactly (exact, the default) or printed with 6 decimals as "
                        "Batsim 4.2.1 prints them (batsim); reply timestamps and now are honoured with both")
    add_verbosity_arguments(p, short=False)   # -v is Batsim's --verbosity
    return p


@command("hdeeprm-batsim")
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``hdeeprm-batsim``.

    Args:
        argv: Command-line arguments without the program name (``None`` = ``sys.argv[1:]``).

    Returns:
        0 when the simulation is done and its outputs written, 1 when it failed (a
        decision the engine refuses, a protocol error, no reply in time), 2 for bad
        input (platform, workload, endpoint).

    Raises:
        SystemExit: With code 2 for a bad command line (argparse), or 0 for ``--help``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.workload) != 1:
        parser.error(f"exactly one -w workload is supported, got {len(args.workload)}")
    if args.timeout is not None and not args.timeout > 0:
        parser.error(f"--timeout must be > 0 seconds, got {args.timeout}")
    log = None
    if args.verbosity in ("network-only", "debug"):
        def log(line: str) -> None:
            print(f"[network] {line}", file=sys.stderr)
    from hdeeprm.run.batsim_server import run_server

    def serve() -> None:
        result = run_server(args.platform, args.workload[0], endpoint=args.socket_endpoint,
                            master_host=args.master_host, export=args.export, energy=args.energy,
                            timeout=args.timeout, log=log, clock=args.clock)
        if args.verbosity != "quiet":
            n = len(result.workload.jobs)
            print(f"hdeeprm-batsim: simulation of {n} jobs done, outputs {args.export}_*.csv",
                  file=sys.stderr)

    return guarded("hdeeprm-batsim", serve, failure_code=1, level=log_level(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
