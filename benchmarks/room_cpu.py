"""How much room the heuristics leave on SWF windows on a loaded heterogeneous CPU platform, before any agent runs.

Usage (from the repository root)::

    python benchmarks/room_cpu.py                          # SDSC-SP2 and KTH-SP2, every policy, 2 workers
    python benchmarks/room_cpu.py --traces kth_sp2 --strategies easy_backfilling --csv /tmp/room_kth.csv
    python benchmarks/room_cpu.py --workers 1 --agent examples/agents/ppo.py --episodes 1000 --seeds 0 1 2
    python benchmarks/room_cpu.py --traces kth_sp2 --cem examples/agents/linear_cem.py --cpu-minutes 10 --seeds 0 1 2

**Scenario, fixed before any training** (issue 36, deliverable 1b): windows of :data:`LENGTH` consecutive jobs of
SDSC-SP2 (128 cores originally) and KTH-SP2 (100 cores) replayed on ``platforms/gaia_mini.json``, a 104-core slice
of UniLu Gaia with three CPU generations of different speed (9.04, 11.72 and 17.6 GFLOP/s per core), power and
memory bandwidth, under HDeepRM's memory-bandwidth contention model (``contention: "hdeeprm"``, each job's
bandwidth per core drawn from ``mem_bw_choices`` 4-24 GB/s with the options' seed, as ``hdeeprm-launch`` converts
a trace). SDSC-SP2 on 104 cores is the loaded case (its jobs asked for up to 128 cores; wider ones are rejected,
the same under every policy). Windows are fixed by position and split by time, so every test job comes after
every training job: :data:`TRAIN_WINDOWS` evenly spaced over the first 60 % of the usable jobs,
:data:`TEST_WINDOWS` over the last 40 %. Seed: :data:`SEED`. No window was chosen by looking at a result.

**Heuristics**: every pair of job ordering (the CPU ones of :data:`~hdeeprm.decision.actions.JOB_POLICIES`, those
that read no GPU field) x core selection (:data:`~hdeeprm.decision.actions.CORE_POLICIES`) x start strategy
(``--strategies``, by default head of line, EASY, conservative backfilling and greedy), replayed by
``hdeeprm-evaluate``'s window runner (:func:`hdeeprm.run.evaluate.evaluate`).

**Printed**, per trace: per window the best policy by mean bounded slowdown (tau = 10 s) and its value; then per
split the per-window oracle (the best policy of each window, chosen in hindsight) and the best single policy,
chosen on the training windows and applied unchanged to the test windows, with the room
``1 - oracle / best single``, and the best single policy of those windows chosen in hindsight; then the energy room:
per window the least energy (GJ) of a policy whose bounded slowdown there is no worse than the best single
policy's, over the best single policy's energy. Timing is measured here, never asserted in tests.

**An agent on the same windows** (``--agent``, fixed before its runs): the agent file (e.g. the project's PPO,
``examples/agents/ppo.py``) acts in HDeepRM's own action space, a policy pair per decision (the options' default
set, the original 36 pairs), under EASY backfilling, with the options' default network, learning rate and
objective (``avg_job_slowdown``). It trains ``--episodes`` episodes, one training window each in a seeded order
(:func:`hdeeprm.run.evaluate.train_agent`), once per ``--seeds`` value (the seed of the training only: the
windows' jobs are those the heuristics ran); its last model runs once, greedily, on the test windows. Printed per
seed: its CPU-minutes and its test mean bounded slowdown beside the best single policy chosen on the training
windows and the best single policy of the test windows chosen in hindsight.

**A linear policy searched by the cross-entropy method** (``--cem``, fixed before its runs): the agent file (e.g.
``examples/agents/linear_cem.py``, a :class:`~hdeeprm.agents.evolution.LinearPolicyAgent`) picks, per decision,
one of the ``--pairs`` policy pairs with the lowest mean bounded slowdown under EASY backfilling on the training
windows (the best first: the untrained agent is that heuristic), under EASY backfilling, from the ``generations``
observation (per CPU generation: busy cores, remaining work, free memory, free bandwidth; then the queue). Its
weights are searched by :func:`hdeeprm.run.evolve.train_cem` (population 16, elite 4, std 0.5) on the mean
bounded slowdown of the training windows, for ``--cpu-minutes`` of CPU per ``--seeds`` value (the seed of the
search); the best weights on the training windows run once on the test windows. Printed as for ``--agent``; each
seed's learning curve (one row per generation) is written beside its checkpoint in ``--outdir``.

**Energy** (``--cem-objective energy``, fixed before its runs): the same agent and candidates, searched on
``E / E_ref + 10 max(0, B / B_ref - 1)`` over the training windows, where E and B are the agent's mean energy (J)
and mean bounded slowdown there and E_ref, B_ref those of the best single policy chosen on the training windows:
less energy, at no worse bounded slowdown than that policy. Printed per seed: the test windows' mean energy and
mean bounded slowdown beside that policy's; the target is >= 5 % less energy with a bounded slowdown no worse.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))

#: The traces (registry names) and the seed of their options (their trace years, as the shipped examples).
TRACES = {"sdsc_sp2": ("pwa:SDSC-SP2-1998-4.2-cln", 1998), "kth_sp2": ("pwa:KTH-SP2-1996-2.1-cln", 1996)}
#: The loaded heterogeneous platform of the scenario.
PLATFORM = "platforms/gaia_mini.json"
#: Jobs of a window.
LENGTH = 256
#: Training and held-out test windows per trace.
TRAIN_WINDOWS, TEST_WINDOWS = 8, 5
#: Share of the usable jobs the training windows are drawn from (the rest, later in time, is the test span).
TRAIN_SHARE = 0.6
#: Seed of the conversion (bandwidth draws) and of the ``random`` policies; each trace's options seed.
SEED = None
#: Start strategies compared by default.
STRATEGIES = ("head_of_line", "easy_backfilling", "conservative_backfilling", "greedy")


def cpu_orderings() -> list[str]:
    """The job orderings of :data:`~hdeeprm.decision.actions.JOB_POLICIES` that read no GPU field."""
    from hdeeprm.decision.actions import JOB_POLICIES
    from hdeeprm.decision.orderings import JOB_ORDERINGS

    return [name for name in JOB_POLICIES if not JOB_ORDERINGS[name].gpu]


def windows(nb_available: int):
    """The fixed windows of a trace with ``nb_available`` usable jobs: training ones, then test ones (in time)."""
    from hdeeprm.run.evaluate import Window

    cut = int(nb_available * TRAIN_SHARE)
    out = []
    for split, count, lo, hi in (("train", TRAIN_WINDOWS, 0, cut), ("test", TEST_WINDOWS, cut, nb_available)):
        step = (hi - lo - LENGTH) // max(count - 1, 1)
        out += [Window(index=len(out) + k, first_job=lo + k * step, nb_jobs=LENGTH, split=split) for k in range(count)]
    return out


def run_trace(name: str, strategies: list[str], workers: int, rows_out: list, args=None) -> None:
    """Every policy on every window of one trace; prints its table and appends its rows to ``rows_out``.

    With ``args.agent``, also trains and tests that agent with each of ``args.seeds`` (:func:`run_agent`).
    """
    from hdeeprm.config.options import load_options
    from hdeeprm.decision.actions import CORE_POLICIES
    from hdeeprm.run.evaluate import evaluate, plan
    from hdeeprm.run.policies import parse_policy_list

    trace, seed = TRACES[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}_gaia_mini.json"
        path.write_text(json.dumps({"seed": seed, "workload_file_path": trace, "contention": "hdeeprm",
                                    "platform_file_path": str(ROOT / PLATFORM), "pybatsim": {"log_level": "WARNING"}}))
        options = load_options(path)
    the_plan = plan(options, nb_windows=1, length=LENGTH)
    chosen = windows(len(the_plan.span.jobs))
    spec = f"{','.join(cpu_orderings())}-{','.join(CORE_POLICIES)}+{','.join(strategies)}"
    policies = parse_policy_list([spec])
    if args is not None and args.table:   # the rows of an earlier --csv of the same windows and policies
        with open(args.table, newline="", encoding="utf-8") as f:
            rows = [{**row, "window": int(row["window"]), "mean_bounded_slowdown": float(row["mean_bounded_slowdown"]),
                     "energy": float(row["energy"])} for row in csv.DictReader(f) if row.pop("trace") == name]
        if len(rows) != len(policies) * len(chosen):
            raise SystemExit(f"{args.table}: {len(rows)} rows of {name}, expected {len(policies) * len(chosen)} "
                             "(windows x policies): write it again with --csv")
    else:
        rows = evaluate(options, policies, chosen, jobs=workers, trace=the_plan.trace)
    rows_out += [{"trace": name, **row} for row in rows]
    table = {(row["window"], row["policy"]): row for row in rows}
    labels = [p.label for p in policies]
    print(f"\n{name}: {len(labels)} policies on {len(chosen)} windows of {LENGTH} jobs, {PLATFORM}")
    print(f"{'split':6s} {'first job':>9s}  {'best policy by mean bounded slowdown':44s} {'bsld':>9s}")
    for w in chosen:
        best = min(labels, key=lambda label: table[w.index, label]["mean_bounded_slowdown"])
        print(f"{w.split:6s} {w.first_job:>9,d}  {best:44s} {table[w.index, best]['mean_bounded_slowdown']:9.2f}")
    train = [w for w in chosen if w.split == "train"]

    def mean(label: str, ws, key: str = "mean_bounded_slowdown") -> float:
        return table_mean(table, label, ws, key)

    single = min(labels, key=lambda label: mean(label, train))
    print(f"best single policy on the training windows: {single}")
    for split in ("train", "test"):
        ws = [w for w in chosen if w.split == split]
        best = mean(single, ws)
        oracle = sum(min(table[w.index, label]["mean_bounded_slowdown"] for label in labels) for w in ws) / len(ws)
        print(f"{split:5s}: best single {best:9.2f}, per-window oracle {oracle:9.2f}: room {1.0 - oracle / best:.1%}"
              " in mean bounded slowdown")
        hindsight = min(labels, key=lambda label: mean(label, ws))
        print(f"{'':5s}  best single chosen on these windows in hindsight: {hindsight} {mean(hindsight, ws):.2f}")
        frugal = sum(min(table[w.index, label]["energy"] for label in labels
                         if table[w.index, label]["mean_bounded_slowdown"]
                         <= table[w.index, single]["mean_bounded_slowdown"]) for w in ws) / len(ws)
        energy = mean(single, ws, "energy")
        print(f"{'':5s}  energy: best single {energy / 1e9:.4f} GJ, per-window oracle at no worse bounded slowdown "
              f"{frugal / 1e9:.4f} GJ: room {1.0 - frugal / energy:.1%}")
    if args is not None and (args.agent or args.cem):
        outdir = Path(args.outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        for seed in args.seeds:
            if args.agent:
                run_agent(name, options, the_plan, chosen, args.agent, args.episodes, seed, table, labels, single,
                          outdir)
            if args.cem:
                easy = sorted((p.label for p in policies if p.strategy == "easy_backfilling"),
                              key=lambda label: mean(label, train))[:args.pairs]
                reference = (mean(single, train, "energy"), mean(single, train))
                run_cem(name, options, the_plan, chosen, args.cem, easy, args.cpu_minutes, seed, table, labels,
                        single, outdir, mean(easy[0], train), reference if args.cem_objective == "energy" else None)


def table_mean(table: dict, label: str, ws, key: str = "mean_bounded_slowdown") -> float:
    """Mean of ``key`` over windows ``ws`` of policy ``label`` in the heuristics' table ((window, label) -> row)."""
    return sum(table[w.index, label][key] for w in ws) / len(ws)


def test_windows(chosen) -> list:
    """The test windows of the plan's ``chosen`` windows."""
    return [w for w in chosen if w.split == "test"]


def agent_test_rows(agent_options, agent: str, model: Path, chosen, the_plan) -> list[dict]:
    """The agent's checkpoint run once, greedy under EASY, on the test windows: one metrics row per window."""
    from hdeeprm.run.evaluate import evaluate
    from hdeeprm.run.policies import Policy

    policy = Policy(label=f"{Path(agent).name}:{model.name}", strategy="easy_backfilling", agent=agent,
                    model=str(model))
    return evaluate(agent_options.replace(run="test"), [policy], test_windows(chosen), trace=the_plan.trace)


def test_agent(agent_options, agent: str, model: Path, chosen, the_plan, table: dict, labels: list[str],
               single: str) -> tuple[float, float, float]:
    """The agent's checkpoint, greedy under EASY, on the test windows.

    Returns:
        Mean bounded slowdown on the test windows of the agent, of the best single policy chosen on the training
        windows, and of the best single policy of the test windows in hindsight.
    """
    rows = agent_test_rows(agent_options, agent, model, chosen, the_plan)
    figure = sum(row["mean_bounded_slowdown"] for row in rows) / len(rows)
    test = test_windows(chosen)
    return figure, table_mean(table, single, test), min(table_mean(table, label, test) for label in labels)


def run_agent(name: str, options, the_plan, chosen, agent: str, episodes: int, seed: int, table: dict,
              labels: list[str], single: str, outdir: Path) -> None:
    """Train ``agent`` on the training windows with ``seed``, test its last model on the test windows, print it.

    The agent acts in HDeepRM's own action space (a policy pair per decision: the options' default, the original
    36 pairs) under EASY backfilling, with the options' default network and objective; the windows' jobs are
    those the baselines ran (converted once, with the trace's seed); ``seed`` seeds the training only.
    """
    from hdeeprm.run.evaluate import train_agent

    agent_options = options.replace(seed=seed, start_strategy="easy_backfilling")
    model = outdir / f"{name}_seed{seed}.pt"
    cpu = time.process_time()
    train_agent(agent_options, agent, chosen, episodes=episodes, outmodel=model, trace=the_plan.trace)
    minutes = (time.process_time() - cpu) / 60
    figure, best, hindsight = test_agent(agent_options, agent, model, chosen, the_plan, table, labels, single)
    print(f"{name} agent seed {seed}: {episodes} episodes, {minutes:.1f} CPU-minutes; test mean bounded slowdown "
          f"{figure:.2f} against the best single policy chosen on training {best:.2f} ({1 - figure / best:+.1%}) and "
          f"the best single policy of the test windows in hindsight {hindsight:.2f} ({1 - figure / hindsight:+.1%})",
          flush=True)


def run_cem(name: str, options, the_plan, chosen, agent: str, pairs: list[str], cpu_minutes: float, seed: int,
            table: dict, labels: list[str], single: str, outdir: Path, start_train: float,
            energy_reference: tuple[float, float] | None = None) -> None:
    """Search a linear policy over ``pairs`` (labels, the best first) by the cross-entropy method; test it; print.

    See the module docstring (``--cem``). Writes ``{name}_cem_seed{seed}.pt`` (the best weights on the training
    windows) and ``{name}_cem_seed{seed}.csv`` (the learning curve) into ``outdir``. With ``energy_reference``
    (E_ref in J, B_ref), the energy objective of the module docstring instead, and ``_energy`` in the file names.
    """
    from hdeeprm.decision.actions import action_index
    from hdeeprm.run.evolve import train_cem
    from hdeeprm.run.policies import parse_policy_list

    actions = [action_index(p.job, p.core) for p in parse_policy_list(pairs)]
    agent_options = options.replace(seed=seed, start_strategy="easy_backfilling", observation="generations",
                                    actions=actions)
    objective, tag = None, ""
    if energy_reference is not None:
        e_ref, b_ref = energy_reference
        tag = "_energy"

        def objective(summaries: list[dict]) -> float:
            e = sum(s["energy"] for s in summaries) / len(summaries)
            b = sum(s["mean_bounded_slowdown"] for s in summaries) / len(summaries)
            return e / e_ref + 10.0 * max(0.0, b / b_ref - 1.0)

    model = outdir / f"{name}_cem{tag}_seed{seed}.pt"
    cpu = time.process_time()
    history = train_cem(agent_options, agent, chosen, outmodel=model, trace=the_plan.trace, population=16, elite=4,
                        std=0.5, generations=10_000, cpu_minutes=cpu_minutes, objective=objective)
    minutes = (time.process_time() - cpu) / 60
    with open(outdir / f"{name}_cem{tag}_seed{seed}.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, list(history[0]))
        out.writeheader()
        out.writerows(history)
    if energy_reference is not None:
        report_energy(name, agent_options, agent, model, chosen, the_plan, table, single, seed, minutes, history)
        return
    figure, best, hindsight = test_agent(agent_options, agent, model, chosen, the_plan, table, labels, single)
    start = table_mean(table, pairs[0], test_windows(chosen))
    print(f"{name} cem seed {seed}: pairs {', '.join(p.split('+')[0] for p in pairs)}; {len(history)} generations, "
          f"{minutes:.1f} CPU-minutes; training mean bounded slowdown {start_train:.2f} -> "
          f"{history[-1]['best_so_far']:.2f}; test {figure:.2f} against the best single policy chosen on training "
          f"{best:.2f} ({1 - figure / best:+.1%}), the start {pairs[0]} {start:.2f} ({1 - figure / start:+.1%}) and "
          f"the best single policy of the test windows in hindsight {hindsight:.2f} ({1 - figure / hindsight:+.1%})",
          flush=True)


def report_energy(name: str, agent_options, agent: str, model: Path, chosen, the_plan, table: dict, single: str,
                  seed: int, minutes: float, history: list[dict]) -> None:
    """Test an energy-searched checkpoint once, greedy under EASY, and print its energy and bounded slowdown."""
    rows = agent_test_rows(agent_options, agent, model, chosen, the_plan)
    e = sum(row["energy"] for row in rows) / len(rows)
    b = sum(row["mean_bounded_slowdown"] for row in rows) / len(rows)
    test = test_windows(chosen)
    e_ref, b_ref = table_mean(table, single, test, "energy"), table_mean(table, single, test)
    print(f"{name} cem energy seed {seed}: {len(history)} generations, {minutes:.1f} CPU-minutes; training objective "
          f"(first generation's best) {history[0]['best']:.4f} -> {history[-1]['best_so_far']:.4f}; test energy "
          f"{e / 1e9:.4f} GJ against {single} {e_ref / 1e9:.4f} GJ ({1 - e / e_ref:+.1%}), mean bounded slowdown "
          f"{b:.2f} against {b_ref:.2f} ({'no worse' if b <= b_ref else 'worse'})", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run every trace and print the room tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--traces", nargs="+", choices=sorted(TRACES), default=list(TRACES))
    p.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    p.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: every core)")
    p.add_argument("--csv", metavar="FILE", help="also write every (trace, window, policy) row")
    p.add_argument("--agent", metavar="AGENT_PY", help="also train this learning agent (see run_agent) and test it")
    p.add_argument("--episodes", type=int, default=1000, help="training episodes per seed (default 1000)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds (default 0 1 2)")
    p.add_argument("--table", metavar="CSV", help="read the heuristics' rows from an earlier --csv instead of running")
    p.add_argument("--cem", metavar="AGENT_PY", help="also search this linear agent's weights (see run_cem)")
    p.add_argument("--cem-objective", choices=("bsld", "energy"), default="bsld",
                   help="what --cem minimises (default bsld; energy: see the module docstring)")
    p.add_argument("--pairs", type=int, default=4, help="policy pairs the --cem agent chooses from (default 4)")
    p.add_argument("--cpu-minutes", type=float, default=10.0, help="CPU-minutes per --cem seed (default 10)")
    p.add_argument("--outdir", default="runs/room_cpu", help="where the agents' checkpoints go")
    args = p.parse_args(argv)
    tic = time.perf_counter()
    rows: list[dict] = []
    for name in args.traces:
        run_trace(name, args.strategies, args.workers, rows, args)
    if args.csv:
        keys = list(dict.fromkeys(k for row in rows for k in row))
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            out = csv.DictWriter(f, keys)
            out.writeheader()
            out.writerows(rows)
    print(f"\n{time.perf_counter() - tic:.1f} s wall ({args.workers} workers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
