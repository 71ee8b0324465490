"""``hdeeprm-workload``: convert SWF traces, show workload statistics, generate traces.

Subcommands::

    hdeeprm-workload convert TRACE.swf[.gz] -o workload.json --nb-cores N --reference-speed FLOPS
    hdeeprm-workload convert TRACE.swf -o workload.json --platform platform.json
    hdeeprm-workload convert TRACE.swf -o workload.json --reference-speed FLOPS   # cores: MaxProcs
    hdeeprm-workload stats TRACE.swf[.gz] | workload.json
    hdeeprm-workload generate -o out.swf --nb-jobs N --nb-cores N --seed S
    hdeeprm-workload generate --model gpu -o pods.csv --nb-jobs N --seed S [--rate JOBS_PER_HOUR] ...
    hdeeprm-workload gpu-stats WORKLOAD [WORKLOAD ...] [--json]   # Philly table or openb pod lists
    hdeeprm-workload fetch NAME [NAME ...] | --all [--mirror URL]  # the public traces into the user cache
    hdeeprm-workload fetch --list                                 # the registry: names, sizes, licences, where

``fetch`` downloads registered traces (:mod:`hdeeprm.workload.datasets`: ``pwa:KTH-SP2-1996-2.1-cln``,
``philly:derived``, ...) into the user cache (``$HDEEPRM_DATA`` moves it), from their upstream URLs or from the
mirror ``--mirror`` / ``$HDEEPRM_DATA_URL``; every file's SHA-256 is verified. The trace arguments of ``convert``,
``stats`` and ``gpu-stats`` take registry names too.

Errors in the inputs are printed on stderr as ``hdeeprm-workload: error: ...`` and the
exit code is 2 (as argparse's own usage errors), without a traceback.

``convert`` takes every default from :mod:`hdeeprm.workload.convert` (the ``DEFAULT_*``
constants, shared with ``hdeeprm-launch``), so a trace converts to the same workload
here and in a run. The platform size is ``--nb-cores``, else the ``--platform``'s cores,
else the trace header's ``MaxProcs`` (said on the output). ``MaxNodes`` is never used
instead: it counts nodes, while the SWF job fields count processors, and the two differ
on machines with SMP nodes.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.errors import OptionsError
from hdeeprm.jsontext import encode_json
from hdeeprm.workload.convert import (ACTUAL_WORK_CHOICES, DEFAULT_ACTUAL_WORK, DEFAULT_ENFORCE_WALLTIME,
                                      DEFAULT_MEM, DEFAULT_MEM_BW_CHOICES, DEFAULT_PROFILE_TYPE,
                                      PROFILE_TYPE_CHOICES, format_report, swf_to_workload, write_report)

PROG = "hdeeprm-workload"


def _bounded(cast: type, strict: bool, what: str):
    """An argparse type: ``cast(text)`` that must be finite and > 0 (``strict``) or >= 0."""
    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            value = None
        if value is None or not (0 < value < math.inf if strict else 0 <= value < math.inf):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value
    return parse


_positive_int = _bounded(int, True, "a positive integer")
_non_negative_int = _bounded(int, False, "an integer >= 0")
_positive_float = _bounded(float, True, "a finite number > 0")
_non_negative_float = _bounded(float, False, "a finite number >= 0")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of ``hdeeprm-workload`` (exposed for documentation tools).

    Returns:
        The parser, with the ``convert``, ``stats`` and ``generate`` subcommands.
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description="Convert SWF traces to Batsim JSON workloads, show workload statistics, "
                               "generate Lublin-Feitelson traces.",
        epilog="Run 'hdeeprm-workload COMMAND --help' for a command's options. Exit codes: 0 done, 2 bad input, "
               "130 interrupted.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    conv = sub.add_parser("convert", help="SWF trace -> Batsim JSON workload",
                          description="Convert an SWF trace into a Batsim JSON workload; print "
                                      "the report of skipped and altered jobs.")
    conv.add_argument("trace", help="SWF trace (.swf or .swf.gz) or registry name (pwa:KTH-SP2-1996-2.1-cln)")
    conv.add_argument("-o", "--output", required=True, help="Batsim JSON workload to write")
    conv.add_argument("--platform", help="HDeepRM platform JSON giving --nb-cores and "
                      "--reference-speed (explicit flags win)")
    conv.add_argument("--nb-cores", type=_positive_int,
                      help="cores of the target platform (default: --platform's, else the trace "
                           "header's MaxProcs)")
    conv.add_argument("--reference-speed", type=_positive_float,
                      help="FLOP/s of the reference core (turns trace seconds into FLOP)")
    conv.add_argument("--nb-jobs", type=_non_negative_int, help="usable jobs to keep (all)")
    conv.add_argument("--first-job", type=_non_negative_int, default=0,
                      help="usable jobs to pass over first (0)")
    conv.add_argument("--time-window", type=float, nargs=2, metavar=("T0", "T1"),
                      help="keep submit times (SWF field 2, s) in [T0, T1)")
    conv.add_argument("--actual-work", choices=ACTUAL_WORK_CHOICES, default=DEFAULT_ACTUAL_WORK,
                      help="actual work: trace run time, or requested time x Tsafrir ratio")
    conv.add_argument("--profile-type", choices=PROFILE_TYPE_CHOICES,
                      default=DEFAULT_PROFILE_TYPE, help="Batsim profile type")
    conv.add_argument("--default-mem", type=_non_negative_float, default=DEFAULT_MEM,
                      help="MB per core for jobs without memory data (0 = unconstrained)")
    conv.add_argument("--mem-bw-choices", type=_non_negative_float, nargs="+",
                      default=list(DEFAULT_MEM_BW_CHOICES), metavar="GBPS",
                      help="memory bandwidth values drawn per job, GB/s per core")
    conv.add_argument("--enforce-walltime", action=argparse.BooleanOptionalAction,
                      default=DEFAULT_ENFORCE_WALLTIME,
                      help="kill jobs that run longer than their requested time (SWF field 9); "
                           "default: no, as hdeeprm-launch and the original HDeepRM")
    conv.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the random draws (0)")
    conv.add_argument("--name", default="w0", help="workload name (w0)")
    conv.add_argument("--report", help="also write the report here (.csv or .json); default "
                      "OUTPUT with the suffix .report.json")

    stats = sub.add_parser("stats", help="statistics of an SWF trace or Batsim JSON workload")
    stats.add_argument("trace", help="SWF trace (.swf, .swf.gz, or a registry name) or Batsim JSON workload")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")

    gen = sub.add_parser("generate", help="synthetic SWF trace (Lublin & Feitelson model) or GPU workload "
                         "(--model gpu)")
    gen.add_argument("-o", "--output", required=True, help="file to write: SWF (.gz compresses), or with --model gpu "
                     "an openb pod list CSV")
    gen.add_argument("--model", choices=("lublin", "gpu"), default="lublin",
                     help="lublin: rigid HPC jobs (SWF, default); gpu: Philly-like GPU jobs "
                          "(hdeeprm.workload.generators.gpu)")
    gen.add_argument("--nb-jobs", type=_non_negative_int, required=True, help="number of jobs")
    gen.add_argument("--nb-cores", type=_positive_int, help="lublin: machine size (required)")
    gen.add_argument("--seed", type=_non_negative_int, default=0, help="seed (0)")
    gen.add_argument("--job-types", action="store_true", default=None,
                     help="lublin: batch and interactive job types instead of whole-sample parameters")
    from hdeeprm.workload.generators.gpu import GpuWorkloadModel

    gpu = GpuWorkloadModel()   # the --model gpu flags default to None: given or not is known, the model fills them
    gen.add_argument("--rate", type=_positive_float,
                     help=f"gpu: mean arrivals per hour ({gpu.rate:g}, Philly's)")
    gen.add_argument("--burst-probability", type=float,
                     help=f"gpu: chance an arrival starts a burst ({gpu.burst_probability:g})")
    gen.add_argument("--burst-median", type=_positive_float,
                     help=f"gpu: median extra jobs of a burst ({gpu.burst_median:g})")
    gen.add_argument("--memory-share", type=float,
                     help=f"gpu: share of jobs needing --memory-gb per GPU ({gpu.memory_share:g})")
    gen.add_argument("--memory-gb", type=_positive_float,
                     help=f"gpu: GPU memory those jobs need, GB ({gpu.memory_gb:g})")
    gen.add_argument("--type-share", type=float,
                     help=f"gpu: share of jobs pinned to one of --types ({gpu.type_share:g})")
    gen.add_argument("--types", nargs="+", metavar="GPU_TYPE",
                     help="gpu: GPU types (library names or aliases) jobs may be pinned to")

    gstats = sub.add_parser("gpu-stats", help="statistics of timed GPU workloads, side by side")
    gstats.add_argument("workloads", nargs="+", help="Philly per-job table (.csv[.gz]) or openb pod lists (paths or "
                        "registry names: philly:derived, openb:pod_list_default)")
    gstats.add_argument("--json", action="store_true", help="print JSON instead of a table")

    fetch = sub.add_parser("fetch", help="download registered traces into the user cache (checksums verified)",
                           description="Download registered traces (hdeeprm.workload.datasets) into the user cache "
                                       "($HDEEPRM_DATA, else the OS cache folder), verifying each SHA-256; a file "
                                       "already there with the right checksum is kept. Runs never download: they "
                                       "read the cache, then $HDEEPRM_SHARED/traces.")
    fetch.add_argument("names", nargs="*", metavar="NAME", help="registry names (see --list)")
    fetch.add_argument("--all", action="store_true", help="every registered trace")
    fetch.add_argument("--list", action="store_true", help="list the registry (name, size, licence, where the "
                       "file is) and exit")
    fetch.add_argument("--mirror", metavar="URL", help="download from this mirror, laid out as the shared folder's "
                       "traces/ (default: $HDEEPRM_DATA_URL, else each trace's upstream URL)")
    fetch.add_argument("--retries", type=_non_negative_int, default=None,
                       help="extra attempts of an interrupted or corrupted download (default 2)")
    add_verbosity_arguments(parser)
    return parser


def _platform_size(args: argparse.Namespace) -> tuple[int, float]:
    """Cores and reference speed (FLOP/s) of the conversion: flags, platform, then the header."""
    nb_cores, speed = args.nb_cores, args.reference_speed
    if args.platform and (nb_cores is None or speed is None):
        from hdeeprm.platform import load_platform
        platform = load_platform(args.platform)
        nb_cores = int(platform.nb_cores) if nb_cores is None else nb_cores
        speed = float(platform.reference_speed) if speed is None else speed
    if nb_cores is None:
        from hdeeprm.workload.swf import read_swf_header

        header = read_swf_header(args.trace)
        nb_cores = header.max_procs
        if nb_cores is None or nb_cores < 1:
            nodes = header.max_nodes
            if nb_cores is not None:
                what = f"the trace header's MaxProcs is {nb_cores}"
            elif "MaxProcs" in header.fields:
                what = f"the trace header's MaxProcs is not an integer ({header.fields['MaxProcs']!r})"
            elif nodes is not None:
                what = (f"the trace header has no MaxProcs (its MaxNodes: {nodes} counts nodes, not the "
                        "processors the jobs ask for)")
            else:
                what = "the trace header has no MaxProcs"
            raise OptionsError(f"{what}: pass --nb-cores N or --platform platform.json ({args.trace})")
        print(f"{nb_cores} cores, from the trace header's MaxProcs")
    if speed is None:
        if args.profile_type == "delay":
            speed = 0.0
        else:
            raise OptionsError("--reference-speed (or --platform) is required for "
                               "parallel_homogeneous profiles")
    return nb_cores, speed


def _convert(args: argparse.Namespace) -> None:
    from hdeeprm.files import check_output_file
    from hdeeprm.workload.batsim_json import write_batsim_workload

    check_output_file(args.output)
    if args.report:
        check_output_file(args.report, "--report")
    nb_cores, speed = _platform_size(args)
    workload = swf_to_workload(
        args.trace, nb_cores=nb_cores, reference_speed=speed, nb_jobs=args.nb_jobs,
        first_job=args.first_job, time_window=tuple(args.time_window) if args.time_window else None,
        actual_work=args.actual_work, profile_type=args.profile_type, default_mem=args.default_mem,
        mem_bw_choices=args.mem_bw_choices, seed=args.seed, name=args.name,
        enforce_walltime=args.enforce_walltime)
    write_batsim_workload(workload, args.output, nb_res=nb_cores)
    report_path = args.report or os.path.splitext(args.output)[0] + ".report.json"
    write_report(workload.report, report_path)
    print(f"{args.trace} -> {args.output}: {len(workload)} jobs, {len(workload.profiles)} profiles")
    print(format_report(workload.report))
    print(f"report written to {report_path}")


def _stats(args: argparse.Namespace) -> None:
    from hdeeprm.workload.stats import format_stats, trace_stats
    stats = trace_stats(args.trace)
    print(encode_json(stats) if args.json else format_stats(stats))


#: ``generate`` flags of each model (argparse destinations); the others are refused with it.
GENERATE_FLAGS: dict[str, tuple[str, ...]] = {
    "lublin": ("nb_cores", "job_types"),
    "gpu": ("rate", "burst_probability", "burst_median", "memory_share", "memory_gb", "type_share", "types"),
}


def _generate(args: argparse.Namespace) -> None:
    from hdeeprm.files import check_output_file

    check_output_file(args.output)
    foreign = [f"--{name.replace('_', '-')}" for model, names in GENERATE_FLAGS.items() if model != args.model
               for name in names if getattr(args, name) is not None]
    if foreign:
        raise OptionsError(f"{', '.join(foreign)} do(es) not apply to --model {args.model}: drop "
                           f"{'them' if len(foreign) > 1 else 'it'}")
    if args.model == "gpu":
        _generate_gpu(args)
        return
    if args.nb_cores is None:
        raise OptionsError("generate --model lublin needs --nb-cores N (the machine size)")
    from hdeeprm.workload.generators.lublin import generate_lublin_swf
    count = generate_lublin_swf(args.output, args.nb_jobs, args.nb_cores, seed=args.seed,
                                job_types=bool(args.job_types))
    print(f"{count} jobs written to {args.output}")


def _generate_gpu(args: argparse.Namespace) -> None:
    import dataclasses

    from hdeeprm.platform.gpu_types import load_gpu_library
    from hdeeprm.workload.generators.gpu import GpuWorkloadModel, check_model, generate_gpu_jobs, write_gpu_pod_list

    given = {name: getattr(args, name) for name in GENERATE_FLAGS["gpu"] if getattr(args, name) is not None}
    if "types" in given:
        library = load_gpu_library()
        for name in given["types"]:
            library.lookup(name, "--types")
        given["types"] = tuple(given["types"])
    model = dataclasses.replace(GpuWorkloadModel(), **given)
    check_model(model, args.nb_jobs)
    count = write_gpu_pod_list(args.output, generate_gpu_jobs(args.nb_jobs, model, seed=args.seed))
    print(f"{count} GPU jobs written to {args.output}")


def _gpu_stats(args: argparse.Namespace) -> None:
    from hdeeprm.workload.gpu_jobs import read_gpu_workload
    from hdeeprm.workload.gpu_stats import format_gpu_stats, gpu_workload_stats

    columns = {os.path.basename(path): gpu_workload_stats(read_gpu_workload(path)) for path in args.workloads}
    print(encode_json(columns) if args.json else format_gpu_stats(columns))


def _with_traces_resolved(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the registry names among the trace arguments replaced by their files (paths as given)."""
    from hdeeprm.workload.datasets import resolve_name

    if getattr(args, "trace", None):
        args.trace = resolve_name(args.trace)
    if getattr(args, "workloads", None):
        args.workloads = [resolve_name(path) for path in args.workloads]
    return args


def _fetch(args: argparse.Namespace) -> None:
    from hdeeprm.workload import datasets

    if args.list:
        if args.names or args.all:
            raise OptionsError("--list goes alone: drop the names and --all")
        print(datasets.format_listing())
        return
    if bool(args.names) == args.all:
        raise OptionsError("name the traces to fetch, or --all (--list shows them)")
    names = [d.name for d in datasets.DATASETS] if args.all else args.names
    for name in names:
        datasets.dataset(name)   # every name checked before any download
    import pooch

    pooch.get_logger().setLevel(log_level(args))   # pooch's "Downloading ..." and retry lines with -v
    retries = datasets.DEFAULT_RETRIES if args.retries is None else args.retries
    for name in names:
        path = datasets.fetch([name], base_url=args.mirror, retries=retries, progress=sys.stderr.isatty())[0]
        print(f"{name}: {path}")
    print(f"{len(names)} trace(s) in {datasets.cache_dir()}, checksums verified")


@command(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hdeeprm-workload``.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        0 on success, 2 on bad input (message on stderr, no traceback).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    handlers = {"convert": _convert, "stats": _stats, "generate": _generate, "gpu-stats": _gpu_stats,
                "fetch": _fetch}
    return guarded(PROG, lambda: handlers[args.command](_with_traces_resolved(args)), level=log_level(args))


if __name__ == "__main__":
    sys.exit(main())
