"""``hdeeprm-platform``: inspect an HDeepRM platform and export it to SimGrid XML.

Usage::

    hdeeprm-platform summary PLATFORM.json|NODE_LIST.csv [--library extra.json ...] [--gpu-library gpus.json ...]
    hdeeprm-platform xml PLATFORM.json -o platform.xml [--library extra.json ...] [--network ideal|library]

``summary`` adds a GPU table (model, type, grouping, nodes, GPUs, GPU memory, peak FP32/FP16 and
TDP) when the platform's node types have GPUs; given an openb node list (``.csv``) it prints the
GPU table only.

Errors in the inputs are printed on stderr as ``hdeeprm-platform: error: <message>``
and the exit status is 2 (no traceback).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.errors import PlatformError
from hdeeprm.platform import load_platform, write_simgrid_platform
from hdeeprm.platform.simgrid_export import NETWORK_MODES
from hdeeprm.platform.hierarchy import ResourceHierarchy

PROG = "hdeeprm-platform"
_COLUMNS = (("cluster", "id", "{}"), ("nodes", "nodes", "{:d}"), ("processors", "processors", "{:d}"),
            ("cores", "cores", "{:d}"), ("peak GFLOP/s", "peak_gflops", "{:.2f}"),
            ("GFLOP/s/core", "mean_core_gflops", "{:.2f}"), ("power W", "max_power_w", "{:.1f}"),
            ("memory GB", "memory_gb", "{:.0f}"))


def summary_table(hierarchy: ResourceHierarchy) -> str:
    """A text table with one row per cluster and a total row.

    Columns: cluster, nodes, processors, cores, peak GFLOP/s (sum of per-core
    peaks), GFLOP/s per core (mean), power W (every core computing, P0), memory GB.
    """
    rows = [*hierarchy.cluster_summaries(), {"id": "total", **hierarchy.summary()}]
    cells = [[head for head, _k, _f in _COLUMNS]]
    cells += [[fmt.format(row[key]) for _h, key, fmt in _COLUMNS] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(_COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if len(rows) > 2:
        lines.insert(len(lines) - 1, lines[1])
    else:
        del lines[-1]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-platform``."""
    parser = argparse.ArgumentParser(prog=PROG, description="Inspect an HDeepRM platform (JSON) or export it "
                                     "to a SimGrid XML platform for Batsim 4.2.1.")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("platform", help="HDeepRM platform JSON file (summary: or an openb node list .csv)")
    common.add_argument("--library", action="append", default=[], metavar="FILE",
                        help="extra type library JSON (repeatable; later files override earlier ones)")
    summary = sub.add_parser("summary", parents=[common], help="print clusters, nodes, processors, cores, "
                             "peak GFLOP/s, power and memory, and the GPUs")
    summary.add_argument("--gpu-library", action="append", default=[], metavar="FILE",
                         help="extra GPU type library JSON (repeatable)")
    xml = sub.add_parser("xml", parents=[common], help="write the SimGrid XML platform")
    xml.add_argument("-o", "--output", required=True, help="output SimGrid XML file")
    xml.add_argument("--network", choices=NETWORK_MODES, default="ideal",
                     help="'ideal' (0 latency, 1000 TBps; default) or 'library' (link types' bandwidth)")
    add_verbosity_arguments(parser)
    return parser


@command(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hdeeprm-platform``.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        0 on success, 2 on bad input (message on stderr).
    """
    args = build_parser().parse_args(argv)

    def run() -> None:
        if args.command == "summary":
            from hdeeprm.platform.gpu_platform import gpu_summary_table, is_node_list, load_gpu_cluster

            if not is_node_list(args.platform):
                print(summary_table(load_platform(args.platform, extra_libraries=args.library)))
            cluster = load_gpu_cluster(args.platform, extra_libraries=args.library, gpu_libraries=args.gpu_library)
            if cluster.nb_gpus:
                print(f"\nGPUs ({cluster.nb_gpus} on {int((cluster.gpu_count > 0).sum())} nodes):")
                print(gpu_summary_table(cluster))
            return
        from hdeeprm.files import check_output_file
        from hdeeprm.platform.gpu_platform import is_node_list

        check_output_file(args.output)
        if is_node_list(args.platform):
            raise PlatformError("hdeeprm-platform xml needs an HDeepRM platform JSON, got an openb node list (a GPU "
                                "cluster; SimGrid platforms describe CPU hosts): give a platform JSON, e.g. "
                                "platforms/gaia_mini.json", path=args.platform)
        hierarchy = load_platform(args.platform, extra_libraries=args.library)
        out = write_simgrid_platform(hierarchy, args.output, network=args.network)
        print(f"wrote {out}: {hierarchy.nb_cores} hosts + master_host")

    return guarded(PROG, run, level=log_level(args))


if __name__ == "__main__":
    sys.exit(main())
