"""``hdeeprm-gpu``: GPU types, GPU clusters and the ATC'23 placement experiment.

Usage::

    hdeeprm-gpu types [--library extra.json ...]
    hdeeprm-gpu nodes NODE_LIST.csv [--library extra.json ...]
    hdeeprm-gpu atc23 TRACE_DIR [--workload default] [--policies random fgd ...] [--seeds 10]
                      [--first-seed 42] [--ratio 1.3] [--output DIR]

``atc23`` places the pods of an openb pod list (``TRACE_DIR/openb_pod_list_<workload>.csv``,
or a CSV path) on the openb GPU nodes (``TRACE_DIR/openb_node_list_gpu_node.csv`` unless
``--nodes``) with the protocol of Weng et al., ATC 2023 (see :mod:`hdeeprm.run.placement`),
prints the GPU allocation ratio against the arrived ratio per policy and, with ``--output``,
writes each curve (``allocation``, ``fragmentation``, ``fragmentation_ratio``) there as numbers,
per seed (``<curve>.csv``) and as mean ± sd over the seeds (``<curve>_mean_sd.csv``), and as a plot
(``<curve>.png``). Errors in the
inputs are printed as ``hdeeprm-gpu: error: <message>`` with exit status 2.
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS
from hdeeprm.arguments import count, real
from hdeeprm.files import check_output_folder
from hdeeprm.outputs.gpu_metrics import ARRIVED_PERCENTS, mean_and_sd, plot_against_arrived
from hdeeprm.platform.gpu_types import load_gpu_library
from hdeeprm.platform.openb import read_openb_nodes
from hdeeprm.run.placement import (ATC23_POLICIES, ATC23_PUBLISHED, ATC23_RATIO, ATC23_SEEDS, MAX_RATIO,
                                   PlacementRun, check_experiment_inputs, run_experiment)
from hdeeprm.workload.openb import read_openb_pods

PROG = "hdeeprm-gpu"
#: Arrived ratios (%) the ``atc23`` table prints.
TABLE_PERCENTS = (50, 70, 90, 100, 110, 120, 130)


def _cell(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def types_table(library_files: Sequence[str] = ()) -> str:
    """One line per GPU type: rates (TFLOP/s), memory (GB), bandwidth (GB/s), TDP and idle power (W), MIG, aliases."""
    library = load_gpu_library(library_files)
    lines = [f"{'type':<16} {'FP64':>6} {'FP32':>6} {'TF32':>6} {'FP16':>7} {'mem GB':>6} {'GB/s':>6} "
             f"{'TDP W':>5} {'idle W':>7} {'MIG':>3}  aliases"]
    for gpu in library.types.values():
        idle = _cell(gpu.idle_power, "{:.0f}") + ("~" if gpu.idle_power is not None and gpu.idle_estimate else "")
        lines.append(f"{gpu.name:<16} {_cell(gpu.fp64):>6} {_cell(gpu.fp32):>6} {_cell(gpu.tf32):>6} "
                     f"{_cell(gpu.fp16):>7} {gpu.memory:>6.0f} {_cell(gpu.mem_bw, '{:.0f}'):>6} "
                     f"{_cell(gpu.tdp, '{:.0f}'):>5} {idle:>7} {gpu.mig_instances:>3}  {', '.join(gpu.aliases)}")
    lines.append("(rates: peak dense TFLOP/s; '-': not published or unknown; '~': idle power estimated)")
    return "\n".join(lines)


def nodes_table(path: str, library_files: Sequence[str] = ()) -> str:
    """One line per GPU model of a node list: nodes, GPUs, GPU memory, peak FP32/FP16 and TDP, and a total line."""
    cluster = read_openb_nodes(path, load_gpu_library(library_files))
    lines = [f"{'model':<8} {'type':<16} {'nodes':>5} {'GPUs':>5} {'GPU mem GB':>10} {'FP32 TFLOP/s':>12} "
             f"{'FP16 TFLOP/s':>12} {'TDP kW':>6}"]
    for row in cluster.summary():
        tdp = None if row["tdp_w"] is None else row["tdp_w"] / 1000
        lines.append(f"{row['model']:<8} {row['type']:<16} {row['nodes']:>5} {row['gpus']:>5} "
                     f"{row['gpu_memory_gb']:>10.0f} {_cell(row['fp32_tflops']):>12} {_cell(row['fp16_tflops']):>12} "
                     f"{_cell(tdp):>6}")
    lines.append(f"{'total':<8} {'':<16} {cluster.nb_nodes:>5} {cluster.nb_gpus:>5}"
                 + ("" if not cluster.skipped else f"   (skipped rows: {cluster.skipped})"))
    return "\n".join(lines)


def curves(runs: Sequence[PlacementRun], percents: np.ndarray = ARRIVED_PERCENTS,
           what: str = "allocation") -> dict[str, np.ndarray]:
    """Per policy, a series read at ``percents`` arrived, float64 (seeds, len(percents)).

    ``what`` is ``allocation``, ``fragmentation`` or ``fragmentation_ratio`` (in %, see
    :func:`~hdeeprm.run.placement.summarize`).
    """
    out: dict[str, list[np.ndarray]] = {}
    for run in runs:
        out.setdefault(run.policy, []).append(getattr(run, f"{what}_at")(percents))
    return {name: np.array(v) for name, v in out.items()}


def atc23_report(runs: Sequence[PlacementRun], published: bool) -> str:
    """The printed result: allocation ratio (%) per policy at :data:`TABLE_PERCENTS` arrived, mean +- sd over seeds.

    With ``published``, the paper's figure at 100 % arrived and whether the mean is within one (published)
    standard deviation + 0.5 points of it.
    """
    table = curves(runs, np.array(TABLE_PERCENTS))
    frag = curves(runs, np.array([100]), "fragmentation")
    head = f"{'policy':<15}" + "".join(f"{p:>13}" for p in TABLE_PERCENTS) + f"{'frag@100':>10}{'failed':>8}"
    if published:
        head += f"{'paper@100':>15}  match"
    lines = ["GPU allocation ratio (%) against arrived GPU request (% of capacity), mean +- sd over "
             f"{len({r.seed for r in runs})} seeds", head]
    for name, values in table.items():
        mean, sd = mean_and_sd(values)
        failed = np.mean([r.nb_failed for r in runs if r.policy == name])
        line = f"{name:<15}" + "".join(f"{m:>7.2f} +-{s:>4.2f}" for m, s in zip(mean, sd))
        line += f"{mean_and_sd(frag[name])[0][0]:>10.2f}{failed:>8.0f}"
        if published and name in ATC23_PUBLISHED:
            ref, ref_sd = ATC23_PUBLISHED[name]
            at100 = mean[TABLE_PERCENTS.index(100)]
            line += f"{ref:>8.2f} +-{ref_sd:>4.2f}  {'yes' if abs(at100 - ref) <= ref_sd + 0.5 else 'NO'}"
        lines.append(line)
    lines.append("(frag@100: fragmented GPU share, % of capacity, at 100 % arrived; failed: pods that fit nowhere)")
    return "\n".join(lines)


#: The curves of the experiment: what (a :class:`~hdeeprm.run.placement.PlacementRun` series), y label, title.
CURVES = (("allocation", "GPU allocation ratio (%)", "GPU allocation (ATC'23 protocol)"),
          ("fragmentation", "fragmented GPU share (% of capacity)", "GPU fragmentation (ATC'23 measure)"),
          ("fragmentation_ratio", "fragmented share of the idle GPUs (%)", "GPU fragmentation ratio (ATC'23 measure)"))


def _number(value: float) -> str:
    """A curve's value in a CSV cell: 2 decimals, empty where the run never reached that arrived %."""
    return f"{value:.2f}" if np.isfinite(value) else ""


def write_outputs(runs: Sequence[PlacementRun], output: Path) -> list[Path]:
    """Write each curve of :data:`CURVES` as numbers and as a plot, against the arrived GPU request (%).

    For each ``what``: ``what.csv`` (one row per policy and seed, with the pods that fit nowhere, a column per
    arrived %), ``what_mean_sd.csv`` (per policy, a ``mean`` and an ``sd`` row over the seeds) and ``what.png``.

    Returns:
        The files written.
    """
    output.mkdir(parents=True, exist_ok=True)
    header = list(map(str, ARRIVED_PERCENTS))
    written = []
    for what, ylabel, title in CURVES:
        series = curves(runs, what=what)
        per_seed, stats = output / f"{what}.csv", output / f"{what}_mean_sd.csv"
        with open(per_seed, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["policy", "seed", "failed", *header])
            for run in runs:
                writer.writerow([run.policy, run.seed, run.nb_failed,
                                 *map(_number, getattr(run, f"{what}_at")(ARRIVED_PERCENTS))])
        with open(stats, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["policy", "statistic", *header])
            for name, values in series.items():
                mean, sd = mean_and_sd(values)
                writer.writerow([name, "mean", *map(_number, mean)])
                writer.writerow([name, "sd", *map(_number, sd)])
        written += [per_seed, stats, plot_against_arrived(series, ARRIVED_PERCENTS, ylabel, output / f"{what}.png",
                                                          title)]
    return written


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-gpu``."""
    parser = argparse.ArgumentParser(prog=PROG, description="GPU types, GPU clusters and the ATC'23 placement "
                                     "experiment (Weng et al., USENIX ATC 2023).")
    sub = parser.add_subparsers(dest="command", required=True)
    library = argparse.ArgumentParser(add_help=False)
    library.add_argument("--library", action="append", default=[], metavar="FILE",
                         help="extra GPU type library JSON (repeatable; later files override earlier ones)")
    sub.add_parser("types", parents=[library], help="print the GPU type library")
    nodes = sub.add_parser("nodes", parents=[library], help="summarise an openb node list")
    nodes.add_argument("node_list", help="openb node list CSV (sn,cpu_milli,memory_mib,gpu,model), or its registry "
                                         "name (openb:node_list_gpu_node; hdeeprm-workload fetch --list)")
    atc = sub.add_parser("atc23", parents=[library], help="run the ATC'23 placement experiment")
    atc.add_argument("trace_dir", help="folder of the openb CSV files (cluster-trace-gpu-v2023/csv)")
    atc.add_argument("--workload", default="default",
                     help="pod list: a variant name (default, cpu050, gpushare40, gpuspec10, multigpu20, ...) "
                     "for TRACE_DIR/openb_pod_list_<name>.csv, a CSV path or a registry name (openb:pod_list_default) "
                     "(default: default)")
    atc.add_argument("--nodes", help="node list CSV or registry name (default: "
                                     "TRACE_DIR/openb_node_list_gpu_node.csv)")
    atc.add_argument("--policies", nargs="+", default=list(ATC23_POLICIES), metavar="NAME",
                     help=f"policies among {', '.join(GPU_PLACEMENTS.names())} (default: the paper's six)")
    atc.add_argument("--seeds", type=int, default=len(ATC23_SEEDS), help="number of seeds (default: 10)")
    atc.add_argument("--first-seed", type=int, default=ATC23_SEEDS[0], help="first seed (default: 42)")
    atc.add_argument("--ratio", type=float, default=ATC23_RATIO,
                     help="total GPU request brought in, over the GPU capacity (default: 1.3)")
    atc.add_argument("--output", help="folder for the allocation, fragmentation and fragmentation ratio curves: "
                     "CSV per seed and mean +- sd, and PNG plots")
    add_verbosity_arguments(parser)
    return parser


@command(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hdeeprm-gpu``.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        0 on success, 2 on bad input (message on stderr).
    """
    args = build_parser().parse_args(argv)

    def run() -> None:
        from hdeeprm.workload.datasets import resolve_name   # registry names (openb:node_list_gpu_node) to files

        if args.command == "types":
            print(types_table(args.library))
            return
        if args.command == "nodes":
            print(nodes_table(resolve_name(args.node_list), args.library))
            return
        if args.output:
            check_output_folder(args.output, "--output")
        count("--seeds", args.seeds)
        count("--first-seed", args.first_seed, 0)
        real("--ratio", args.ratio, positive=True, maximum=MAX_RATIO)
        trace_dir = Path(args.trace_dir)
        workload = Path(resolve_name(args.workload)) if args.workload.endswith(".csv") or ":" in args.workload \
            else trace_dir / f"openb_pod_list_{args.workload}.csv"
        library = load_gpu_library(args.library)
        cluster = read_openb_nodes(resolve_name(args.nodes) if args.nodes else
                                   trace_dir / "openb_node_list_gpu_node.csv", library)
        pods = read_openb_pods(workload, library)
        check_experiment_inputs(cluster, pods)
        print(f"{cluster.nb_nodes} nodes, {cluster.nb_gpus} GPUs ({cluster.source}); {len(pods)} pods "
              f"({pods.source}); ratio {args.ratio}, seeds {args.first_seed}..{args.first_seed + args.seeds - 1}",
              flush=True)
        runs = run_experiment(cluster, pods, args.policies, range(args.first_seed, args.first_seed + args.seeds),
                              args.ratio)
        published = workload.name == "openb_pod_list_default.csv" and args.ratio == ATC23_RATIO
        print(atc23_report(runs, published))
        if args.output:
            for path in write_outputs(runs, Path(args.output)):
                print(f"wrote {path}")

    return guarded(PROG, run, level=log_level(args))


if __name__ == "__main__":
    sys.exit(main())
