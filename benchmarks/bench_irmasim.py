"""HDeepRM against IRMaSim: jobs per second on the first N SDSC-SP2 jobs, FCFS with the fastest resources.

Usage (from the repository root)::

    git clone https://github.com/irmasim/IRMaSim /tmp/irmasim      # their code, never committed
    python benchmarks/bench_irmasim.py --irmasim /tmp/irmasim [--jobs 5000] [--repeat 1]

What is compared, on one machine, one after the other:

* **The jobs.** HDeepRM converts the first ``--jobs`` usable jobs of
  ``SDSC-SP2-1998-4.2-cln.swf.gz`` (its SWF rules, ``nb_jobs`` overridden in a copy of
  ``examples/sdsc_sp2_gaia_first_high_gflops.json``) into ``parallel_homogeneous`` jobs; the
  *same* converted jobs are written as IRMaSim's workload JSON (:func:`irmasim_workload`): the
  submission time, ``ntasks`` = the job's cores, ``req_ops`` = the FLOP each core computes
  (trace run time x the platform's mean core speed, HDeepRM's reference speed), ``req_time`` = the
  requested time, ``ipc`` 1, ``mem`` and ``mem_vol`` 0.
* **The platform.** UniLu Gaia (``platforms/gaia.json``: 153 nodes, 342 processors, 2,280 cores),
  written as an IRMaSim ``modelV1`` platform file (:func:`irmasim_platform`) from HDeepRM's built
  platform: the same clusters, node types, node order, processors per node and cores per processor;
  each processor's per-core speed is exact (``clock_rate`` = FLOP/s / 1e9, ``dpflops_per_cycle`` 1).
  What differs: HDeepRM's jobs carry a memory bandwidth per core (drawn from the options'
  ``mem_bw_choices``, 4-24 GB/s) and its contention model slows the cores of a processor whose
  bandwidth is over-used; IRMaSim's jobs get ``mem_vol`` 0 and its memory-contention constants
  (``b``, ``c``, ``da``..``dd``) are set so that they never act (requested bandwidth 0 < ``c``: speed-up
  1), though IRMaSim still recomputes every processor's speed-ups at each task start and end. Its
  power model (``dynamic_power`` per busy core = HDeepRM's per-core TDP share, ``static_power`` and
  ``min_power`` 0) differs from HDeepRM's pstate energy, so energy figures are not compared.
* **The policy.** HDeepRM: the ``first-high_gflops`` policy pair (``CLASSIC`` agent): first come,
  first served, each job on the fastest idle *cores* of the whole platform. IRMaSim: its
  ``Heuristic`` workload manager with ``job_selection`` ``first`` and ``resource_selection``
  ``high_gflops``: first come, first served (a queue head that does not fit blocks the queue, as in
  HDeepRM), each job on the fastest *nodes* with an idle core. IRMaSim places tasks per node: a job of
  ``ntasks`` tasks asks for ``nodes`` nodes with ``ntasks_per_node`` idle cores each; with the default
  ``--tasks-per-node 1`` every task goes to its own node (SDSC-SP2 jobs ask for at most 128 cores,
  Gaia has 153 nodes), the closest IRMaSim's node-level heuristic comes to HDeepRM's core-level one.
  Start times therefore differ; both run every job once from submission to end.
  Neither kills a job at its requested time (HDeepRM's ``enforce_walltime`` is off in these options).
* **What is timed.** Three figures, each one the whole work it names:
  IRMaSim whole process (``python -c 'from irmasim.cmd import launch; launch()' options.json`` in a
  fresh interpreter with the checkout on ``PYTHONPATH``: imports, reading its JSON workload and platform,
  simulation, and its outputs ``irmasim.log``, ``simulation.log`` (one line of statistics at every step),
  ``jobs.log`` (one line per task) and its printed statistics), and IRMaSim's own "Execution time" line
  (the same run less interpreter start-up and imports); HDeepRM whole process (``python -m
  hdeeprm.cli.launch OPTIONS -o DIR -q``: start-up, imports, SWF conversion, simulation, all its outputs:
  Batsim-format ``out_jobs.csv``, ``out_schedule.csv``, ``out_pstate_changes.csv``,
  ``out_consumed_energy.csv``, metrics, ``run.json``); and HDeepRM's simulation alone (best of
  ``--repeat``, as ``bench_launch.py``: no outputs, workload already converted). Neither side's
  conversion into the other's format is timed. The script checks that IRMaSim finished all N jobs.

Measured (``--jobs 5000 --repeat 5``, IRMaSim at commit 7a51f14, one 2-core machine shared with other
sessions, 2026-11-26; docs/experiments.rst, "HDeepRM against IRMaSim"), both checkouts byte-compiled first:
at ``uptime`` load 0.2-0.9, IRMaSim 105.4 s (47 jobs/s), HDeepRM whole process 0.67 s (7,467 jobs/s, median of 5),
simulation alone 0.28 s: **157.5x wall** (137.4x CPU), issue 24's 150x met; at load 2.2-2.6 (another session
training on one core), IRMaSim 106.3 s, HDeepRM 0.73 s: 146.5x wall and 146.4x CPU, 2 % short. Before the
byte-compilation step (2026-11-25), every HDeepRM start recompiled its sources (this machine sets
``PYTHONDONTWRITEBYTECODE``): 0.75 s and 138x at load 0.6-1.0.
Timing is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import groupby
from pathlib import Path

from hdeeprm.decision.contention import bookkeeping_path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
OPTIONS = ROOT / "examples" / "sdsc_sp2_gaia_first_high_gflops.json"
#: IRMaSim workload manager settings matching HDeepRM's ``first-high_gflops`` policy pair.
IRMASIM_MANAGER = {"type": "Heuristic", "job_selection": "first", "resource_selection": "high_gflops"}
#: IRMaSim ``modelV1`` processor fields HDeepRM has no counterpart for: memory-contention constants that
#: never act when no job asks for memory bandwidth (requested bandwidth 0 < ``c``), and no idle power.
INERT_MODEL = {"b": 0.0, "c": 1.0, "da": 1.0, "db": 0.0, "dc": 1.0, "dd": 0.0, "static_power": 0.0,
               "min_power": 0.0}
PLATFORM_NAME = "hdeeprm_platform"


def irmasim_platform(hierarchy) -> dict:
    """IRMaSim ``modelV1`` platform file contents for an HDeepRM CPU platform.

    Args:
        hierarchy: A :class:`~hdeeprm.platform.hierarchy.ResourceHierarchy` (e.g. ``build_platform(options)``).

    Returns:
        ``{"platform": {PLATFORM_NAME: ...}, "node": {...}, "processor": {...}}``: one IRMaSim node type per
        distinct (node type, processors) of the platform, one processor type per distinct (type, cores,
        per-core speed), nodes listed per cluster in HDeepRM's order (runs of one type as ``number``).
    """
    processors: dict[str, dict] = {}
    node_types: dict[str, dict] = {}
    node_keys: list[str] = []
    for node in range(hierarchy.nb_nodes):
        first = int(hierarchy.node_first_processor[node])
        slots = []
        for proc in range(first, first + int(hierarchy.node_n_processors[node])):
            cores, speed = int(hierarchy.processor_n_cores[proc]), float(hierarchy.processor_speed[proc])
            name = f"{hierarchy.processor_type[proc]}|{cores}|{speed:g}"
            processors.setdefault(name, {
                "uarch": "hdeeprm", "id": name, "type": "CPU", "cores": cores, "clock_rate": speed / 1e9,
                "dpflops_per_cycle": 1, "llc_size": 0, "power": float(hierarchy.processor_power[proc]) * cores,
                "dynamic_power": float(hierarchy.processor_power[proc]), **INERT_MODEL})
            if slots and slots[-1]["type"] == name:
                slots[-1]["number"] += 1
            else:
                slots.append({"type": name, "number": 1})
        key = f"{hierarchy.node_type[node]}|" + ",".join(f"{s['type']}x{s['number']}" for s in slots)
        node_types.setdefault(key, {"id": key, "processors": slots,
                                    "memory": {"type": "DDR", "capacity": float(hierarchy.node_memory[node]) / 1024}})
        node_keys.append(key)
    clusters = []
    for cluster in range(hierarchy.nb_clusters):
        first = int(hierarchy.cluster_first_node[cluster])
        keys = node_keys[first:first + int(hierarchy.cluster_n_nodes[cluster])]
        clusters.append({"id": hierarchy.cluster_id[cluster],
                         "nodes": [{"type": key, "number": len(list(run))} for key, run in groupby(keys)],
                         "local_links": {"type": "InfiniBand QDR", "latency": "0us"}})
    platform = {"id": PLATFORM_NAME, "clusters": clusters, "model_name": "modelV1",
                "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}
    return {"platform": {PLATFORM_NAME: platform}, "node": node_types, "processor": processors}


def irmasim_workload(workload, nb_nodes: int, tasks_per_node: int = 1) -> dict:
    """IRMaSim workload file contents for HDeepRM's converted jobs (``parallel_homogeneous`` profiles).

    Args:
        workload: A :class:`~hdeeprm.workload.model.Workload` whose profiles are ``parallel_homogeneous``.
        nb_nodes: Nodes of the platform: a job may not ask for more.
        tasks_per_node: IRMaSim tasks per node of each job (the last node may hold fewer): ``nodes`` =
            ceil(cores / tasks_per_node).

    Returns:
        ``{"jobs": [...]}`` with ``id``, ``subtime`` (s), ``ntasks``, ``nodes``, ``req_ops`` (FLOP per task,
        rounded up to an integer as IRMaSim does), ``ipc`` 1, ``req_time`` (s), ``mem`` 0, ``mem_vol`` 0.

    Raises:
        ValueError: a job computes nothing (not ``parallel_homogeneous``) or needs more nodes than the platform has.
    """
    jobs = []
    for job in workload.jobs:
        if job.profile.cpu <= 0:
            raise ValueError(f"job {job.id}: profile {job.profile.name!r} computes no FLOP; "
                             "IRMaSim needs parallel_homogeneous jobs (profile_type in the options)")
        nodes = math.ceil(job.res / tasks_per_node)
        if nodes > nb_nodes:
            raise ValueError(f"job {job.id}: {job.res} cores at {tasks_per_node} per node need {nodes} nodes, "
                             f"the platform has {nb_nodes}: raise --tasks-per-node")
        req_time = job.requested_time if job.requested_time > 0 else job.walltime
        jobs.append({"id": f"job{job.id}", "subtime": job.subtime, "ntasks": job.res, "nodes": nodes,
                     "req_ops": math.ceil(job.profile.cpu), "ipc": 1, "req_time": req_time, "mem": 0,
                     "mem_vol": 0})
    return {"jobs": jobs}


def check_checkout(checkout: Path) -> str | None:
    """Why ``checkout`` cannot run IRMaSim's Heuristic manager (one line), or None when it looks usable."""
    for rel in ("irmasim/cmd.py", "irmasim/Simulator.py", "irmasim/workload_manager/Heuristic.py",
                "irmasim/platform/models/modelV1/ModelBuilder.py"):
        if not (checkout / rel).is_file():
            return f"--irmasim {checkout}: no {rel} there (a checkout of github.com/irmasim/IRMaSim is needed)"
    return None


def byte_compile(*packages: Path) -> None:
    """Write every module's bytecode (``__pycache__``) under ``packages`` now, as ``pip install`` does.

    An installed package starts from its bytecode. Without it (a fresh checkout, or a machine that
    sets ``PYTHONDONTWRITEBYTECODE``, as this project's test machines do) every start compiles the
    sources again: about 70 ms of HDeepRM's start-up, which is not the simulator's speed. Both sides
    are compiled, so both are timed as installed.
    """
    import compileall

    for package in packages:
        compileall.compile_dir(str(package), quiet=1)


def timed_process(command: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``command`` (``subprocess.run`` keywords): (its result, wall seconds, CPU seconds user + system).

    The CPU seconds are the child's own (``getrusage(RUSAGE_CHILDREN)`` before and after), which other
    processes loading the machine do not inflate as they do the wall time.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(command, **kwargs)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_irmasim(checkout: Path, folder: Path, nb_jobs: int) -> tuple[float, float, float, int]:
    """Run IRMaSim in a fresh interpreter on the files in ``folder``.

    Returns:
        (wall seconds, CPU seconds, its own printed "Execution time" in seconds, jobs it finished).

    Raises:
        RuntimeError: IRMaSim failed (its last stderr line) or printed no job count.
    """
    options = {"seed": 0, "platform_name": PLATFORM_NAME, "platform_file": str(folder / "platform.json"),
               "workload_file": str(folder / "workload.json"), "trajectory_origin": "0",
               "trajectory_length": str(nb_jobs), "output_dir": str(folder / "out"),
               "workload_manager": dict(IRMASIM_MANAGER)}
    (folder / "options.json").write_text(json.dumps(options))
    env = dict(os.environ, PYTHONPATH=str(checkout))
    proc, wall, cpu = timed_process([sys.executable, "-c", "from irmasim.cmd import launch; launch()",
                                     str(folder / "options.json")], cwd=folder, env=env, capture_output=True,
                                    text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"IRMaSim exited with status {proc.returncode}: {last}")
    finished = re.search(r"^Jobs:.*finished: (\d+)", proc.stdout, re.M)
    own = re.search(r"^Execution time ([0-9.e+-]+) seconds", proc.stdout, re.M)
    if not finished or not own:
        raise RuntimeError("IRMaSim printed no 'Jobs: ... finished' or 'Execution time' line")
    return wall, cpu, float(own.group(1)), int(finished.group(1))


def window_options(nb_jobs: int, folder: Path) -> Path:
    """A copy of :data:`OPTIONS` with ``nb_jobs`` set and the platform path made absolute."""
    data = json.loads(OPTIONS.read_text())
    data["platform_file_path"] = str((OPTIONS.parent / data["platform_file_path"]).resolve())
    data["nb_jobs"] = nb_jobs
    out = folder / f"options_{nb_jobs}.json"
    out.write_text(json.dumps(data))
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--irmasim", type=Path, required=True, help="a checkout of github.com/irmasim/IRMaSim")
    p.add_argument("--jobs", type=int, default=5000, help="first N jobs of SDSC-SP2 (default 5000)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs of HDeepRM's whole process (median kept) and of its simulation alone (best kept)")
    p.add_argument("--tasks-per-node", type=int, default=1, help="IRMaSim tasks per node of a job (default 1)")
    args = p.parse_args(argv)
    print(f"contention bookkeeping: {bookkeeping_path()}")
    problem = check_checkout(args.irmasim)
    if problem:
        p.error(problem)
    sys.path.insert(0, str(ROOT))
    from hdeeprm.agents.base import ClassicAgent
    from hdeeprm.config.build import build_platform, build_workload
    from hdeeprm.config.options import load_options
    from hdeeprm.run.episode import run_episode

    with tempfile.TemporaryDirectory(prefix="hdeeprm-irmasim-") as tmp:
        folder = Path(tmp)
        options_file = window_options(args.jobs, folder)
        options = load_options(options_file)
        hierarchy = build_platform(options)
        workload = build_workload(options, hierarchy)
        n = len(workload.jobs)
        (folder / "platform.json").write_text(json.dumps(irmasim_platform(hierarchy)))
        (folder / "workload.json").write_text(json.dumps(irmasim_workload(workload, hierarchy.nb_nodes,
                                                                          args.tasks_per_node)))
        byte_compile(ROOT / "hdeeprm", args.irmasim.resolve() / "irmasim")
        try:
            theirs, theirs_cpu, theirs_own, finished = run_irmasim(args.irmasim.resolve(), folder, n)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        processes = [timed_process([sys.executable, "-m", "hdeeprm.cli.launch", str(options_file), "-o",
                                    str(folder / f"hdeeprm-out-{r}"), "-q"], check=True,
                                   env=dict(os.environ, PYTHONPATH=str(ROOT)))[1:] for r in range(args.repeat)]
        ours, ours_cpu = (statistics.median(t[k] for t in processes) for k in (0, 1))
        simulate = simulate_cpu = math.inf
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            run_episode(hierarchy, workload, options, ClassicAgent(0), record=False)
            simulate = min(simulate, time.perf_counter() - t0)
            simulate_cpu = min(simulate_cpu, time.process_time() - c0)
    rows = (("IRMaSim whole process", theirs, theirs_cpu), ("IRMaSim own 'Execution time'", theirs_own, None),
            ("HDeepRM whole process", ours, ours_cpu), ("HDeepRM simulation alone", simulate, simulate_cpu))
    print(f"first {n} SDSC-SP2 jobs on Gaia ({hierarchy.nb_cores} cores), FCFS + fastest resources; "
          f"IRMaSim finished {finished} of {n}")
    for name, seconds, cpu in rows:
        cpu_text = f"{cpu:>9.2f} CPU s {n / cpu:>10,.0f} jobs/CPU s" if cpu else ""
        print(f"{name:<30}{seconds:>9.2f} s {n / seconds:>10,.0f} jobs/s   {cpu_text}")
    print(f"ratio HDeepRM / IRMaSim, whole process: {theirs / ours:.1f}x wall, {theirs_cpu / ours_cpu:.1f}x CPU; "
          f"HDeepRM simulation alone against IRMaSim's own time: {theirs_own / simulate:.1f}x wall")
    if finished != n:
        print(f"warning: IRMaSim finished {finished} of {n} jobs: the figures do not compare the same work",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
