"""Held-out evidence in HDeepRM's protocol: a kernel-PPO agent against every heuristic of ``hdeeprm-evaluate``.

One command per seed, then the aggregation (CPU; one torch thread)::

    python benchmarks/heldout_ppo.py --trace sdsc_sp2 --seed 0 --cpu-minutes 25 -o runs/heldout/sdsc_sp2_s0
    python benchmarks/heldout_ppo.py --aggregate runs/heldout/sdsc_sp2_s0 runs/heldout/sdsc_sp2_s1 ...

The protocol, fixed before any reported run:

* **Trace and platform** (``--trace``): ``sdsc_sp2`` = ``examples/evaluation/sdsc_sp2_128.json``
  (SDSC-SP2-1998-4.2-cln from the Parallel Workloads Archive on ``platforms/sdsc_sp2.json``, 128
  cores, options seed 1998); ``kth_sp2`` = ``examples/evaluation/kth_sp2_100.json`` (KTH-SP2-1996-2.1-cln
  on ``platforms/kth_sp2.json``, 100 cores, options seed 1996). Traces are read from
  ``$HDEEPRM_SHARED/traces`` (default ``../shared``).
* **Windows**: ``hdeeprm-evaluate``'s :func:`~hdeeprm.run.evaluate.plan` with 25 windows of 1,024 jobs
  and test fraction 0.4 (:data:`NB_WINDOWS`, :data:`LENGTH`, :data:`TEST_FRACTION`): 15 training and 10
  test windows, drawn with the options' seed (not the training seed), so every seed and every policy
  meets the same test windows. The same command with ``hdeeprm-evaluate`` (``-n 25 -l 1024 --test-fraction 0.4``)
  draws the same windows.
* **Heuristics**: every registered job ordering x ``head_of_line``, ``easy_backfilling``,
  ``conservative_backfilling``, core selection ``high_gflops`` (what ``hdeeprm-evaluate`` compares),
  run by :func:`~hdeeprm.run.evaluate.evaluate` on the training windows (to fix the agent's backfilling
  part, below) and, once, at the end, on the test windows: the bar is the best of them there.
* **Environment**: ``hdeeprm/HDeepRM-BackfillSlot-v0`` (:class:`~hdeeprm.env.backfill_slot.BackfillSlotEnv`):
  the agent names one of the first 128 queued jobs; it starts if it fits, otherwise it gets the
  backfilling strategy's reservation and the other jobs backfill around it in a fixed ordering; the
  agent is asked again at every decision point (``commit=False``). The backfilling strategy and
  ordering are those of the best heuristic **on the training windows** (a heuristic with
  ``head_of_line`` best there would fall back to EASY), so that naming that ordering's head replays
  that heuristic exactly. Features (6 per job) are scaled by fixed normalisers: the 99th percentiles
  of requested time and cores over the training windows' jobs.
* **Agent**: RLScheduler's kernel (:class:`~hdeeprm.agents.kernel_ppo.RaggedKernel`, 6 -> 32 -> 16 -> 8
  -> 1 per job, softmax over the shown jobs). It first imitates the chosen heuristic (``--imitate-steps``
  2,000 Adam steps at 3e-3 of cross-entropy, minibatches of 256 decisions, on the decisions of that
  ordering's head over every training sequence below), so that PPO starts from the best heuristic of the
  training windows rather than from random weights. PPO as ``benchmarks/rlscheduler_ppo.py --group 4``: an epoch
  draws 25 training sequences and replays each 4 times (100 trajectories); a trajectory's return is
  minus the mean bounded slowdown of its sequence (the sum of RLScheduler's per-job rewards, up to the
  factor 256), its advantage that return minus the mean of the 3 others on the same sequence; clip 0.2,
  up to 20 full-batch Adam steps at 3e-3 with KL early stop at 0.015, no critic.
* **Training data**: 256-job sequences inside the training windows (a training window, then a start at
  a multiple of 64 jobs, drawn with the seed); nothing from a test window is read before the test.
* **Model selection** (training windows only): every ``--select-every`` epochs (and before the first),
  the greedy (argmax) policy is run on the 15 training windows; the checkpoint with the lowest mean
  bounded slowdown there is kept.
* **Budget**: ``--cpu-minutes`` of ``time.process_time()`` for everything before the test (the
  training-window heuristics, imitation, rollouts, updates, selection runs; the loop stops at the first
  epoch boundary past the budget, then one last selection run), one torch thread. The reported runs
  used 25 on SDSC-SP2 and 12 on KTH-SP2 (under the issue's 30, so that the seeds finished on the
  2-core machine in the session's time).
* **Test**: once, the selected checkpoint, greedy, on the 10 test windows, beside every heuristic
  there; gain = (best heuristic's mean - agent's mean) / best heuristic's mean.

Outputs (``-o``): ``training.csv`` and ``training.png`` (per epoch: the sampled agent's mean bounded
slowdown on its training sequences beside the chosen heuristic on the same sequences; at selection
epochs the greedy agent's mean over the training windows beside that heuristic's), ``heuristics_train.csv``,
``test.csv`` (per test window: the agent and every heuristic), ``model.pt``, ``run.json``.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from hdeeprm.agents.kernel_ppo import RaggedKernel, choose, group_batch, ppo_update, ragged_numpy
from hdeeprm.config.options import load_options
from hdeeprm.decision.observation import NORMALISER_PERCENTILE, job_quantities
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.env.backfill_slot import BACKFILL_SLOT_FEATURES, BACKFILLINGS, BackfillSlotEnv
from hdeeprm.run.evaluate import Window, WindowRunner, evaluate, plan
from hdeeprm.run.policies import parse_policy_list

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
#: The traces of the protocol: name -> options file.
TRACES = {"sdsc_sp2": ROOT / "examples" / "evaluation" / "sdsc_sp2_128.json",
          "kth_sp2": ROOT / "examples" / "evaluation" / "kth_sp2_100.json"}
NB_WINDOWS, LENGTH, TEST_FRACTION = 25, 1024, 0.4
SEQUENCE, STRIDE = 256, 64          # training sequences: 256 jobs, starting at multiples of 64 inside a window
SLOTS = 128
STRATEGIES = ("head_of_line", *BACKFILLINGS)
CORE = "high_gflops"
METRIC = "mean_bounded_slowdown"


def heuristic_specs() -> list[str]:
    """Every registered ordering x head_of_line, EASY, conservative (``high_gflops``), as one spec."""
    return [f"{','.join(JOB_ORDERINGS.names())}-{CORE}+{','.join(STRATEGIES)}"]


def table(options, windows) -> dict[str, list[float]]:
    """Mean bounded slowdown of every heuristic on each window: label -> values in window order."""
    out: dict[str, list[float]] = {}
    for row in evaluate(options, parse_policy_list(heuristic_specs()), windows):
        out.setdefault(row["policy"], []).append(float(row[METRIC]))
    return out


def rollout(env: BackfillSlotEnv, scores, rng, greedy: bool):
    """One episode; (steps of (rows, action, logp, 0, reward, glob), mean bounded slowdown)."""
    obs, info = env.reset(seed=0)
    steps, done = [], False
    glob = np.zeros(2, dtype=np.float32)
    while not done:
        n = min(info["queue"], SLOTS)
        rows = obs[:n]
        action, logp = choose(rows, scores, rng, greedy)
        obs, _, done, truncated, info = env.step(action)
        steps.append([rows, action, logp, 0.0, 0.0, glob])
    bsld = float(info["metrics"][METRIC])
    steps[-1][4] = -bsld              # the return: minus the sequence's mean bounded slowdown
    return [tuple(s) for s in steps], bsld


def expert_samples(setup: "Setup", starts: list[int], rng) -> list[tuple[np.ndarray, int]]:
    """(rows, choice) at every decision with a choice, driving sequences by the backfill ordering's head.

    The expert names, among the shown jobs, the first of the backfill ordering: with 128 jobs shown or
    fewer queued, the chosen heuristic itself.
    """
    order = JOB_ORDERINGS[setup.ordering]
    samples = []
    for start in starts:
        env = setup.env(start, SEQUENCE)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            m = env.episode.manager
            shown = m.queue[:SLOTS]
            choice = shown.index(order.order(shown, rng, m.now)[0])
            if len(shown) > 1:
                samples.append((obs[:len(shown)].copy(), choice))
            obs, _, done, _, info = env.step(choice)
    return samples


def imitate(net: RaggedKernel, samples, rng, steps: int, lr: float, batch: int = 256) -> float:
    """Behaviour cloning: ``steps`` Adam steps of cross-entropy on minibatches of ``samples``; the last loss."""
    opt = torch.optim.Adam(net.kernel.parameters(), lr=lr)
    loss = torch.tensor(np.nan)
    for _ in range(steps):
        pick = rng.integers(len(samples), size=batch)
        rows = [samples[i][0] for i in pick]
        sizes = np.array([len(r) for r in rows])
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        x = torch.from_numpy(np.concatenate(rows))
        seg = torch.from_numpy(np.repeat(np.arange(batch), sizes))
        act = torch.from_numpy(offsets + np.array([samples[i][1] for i in pick]))
        loss = -net.log_probs(x, seg, batch, act).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.item())


class Setup:
    """The plan, the heuristic fixed on the training windows, and cached environments."""

    def __init__(self, trace: str) -> None:
        self.options = load_options(TRACES[trace])
        self.plan = plan(self.options, nb_windows=NB_WINDOWS, length=LENGTH, test_fraction=TEST_FRACTION)
        self.train = self.plan.selected("train")
        self.test = self.plan.selected("test")
        self.runner = WindowRunner(self.options, self.plan.trace)
        q = np.concatenate([job_quantities(self.runner.workload(w)) for w in self.train])
        p = np.percentile(q[:, :2], NORMALISER_PERCENTILE, axis=0)
        self.normalisers = (float(max(p[0], 1.0)), float(max(p[1], 1.0)))
        self.heuristics_train = table(self.options, self.train)
        self.best_train = min(self.heuristics_train, key=lambda k: np.mean(self.heuristics_train[k]))
        self.reference = parse_policy_list([self.best_train])[0]   # hdeeprm-evaluate's own reading of the label
        self.ordering = self.reference.job
        strategy = self.reference.strategy
        self.backfilling = strategy if strategy in BACKFILLINGS else BACKFILLINGS[0]
        self._envs: dict[tuple[int, int], BackfillSlotEnv] = {}
        self._ref: dict[tuple[int, int], float] = {}

    def env(self, first_job: int, nb_jobs: int) -> BackfillSlotEnv:
        """The environment of ``nb_jobs`` jobs from usable job ``first_job`` (cached)."""
        key = (first_job, nb_jobs)
        if key not in self._envs:
            workload = self.runner.workload(Window(-1, first_job, nb_jobs, "train"))
            self._envs[key] = BackfillSlotEnv(self.options, platform=self.runner.hierarchy, workload=workload,
                                              nb_slots=SLOTS, backfilling=self.backfilling,
                                              backfill_ordering=self.ordering, commit=False,
                                              normalisers=self.normalisers)
        return self._envs[key]

    def reference_on(self, first_job: int, nb_jobs: int) -> float:
        """The chosen heuristic's mean bounded slowdown on a sequence (cached)."""
        key = (first_job, nb_jobs)
        if key not in self._ref:
            self._ref[key] = float(self.runner.run(Window(-1, first_job, nb_jobs, "train"), self.reference)[METRIC])
        return self._ref[key]


def greedy_mean(setup: Setup, windows, scores) -> list[float]:
    """The greedy policy's mean bounded slowdown on each window."""
    return [rollout(setup.env(w.first_job, w.nb_jobs), scores, None, greedy=True)[1] for w in windows]


def plot(curve: list[dict], path: Path, title: str, ref_label: str, ref_train: float) -> None:
    """training.png: sampled training sequences (20-epoch running mean) and greedy training-window means."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def running(v):
        v = np.asarray(v, dtype=float)
        return [v[max(0, i - 19):i + 1].mean() for i in range(len(v))]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    rows = [c for c in curve if c["train_sampled"] != ""]
    x = [c["episodes"] for c in rows]
    top.plot(x, running([c["train_sampled"] for c in rows]), label="agent, sampled")
    top.plot(x, running([c["train_reference"] for c in rows]), "--", label=f"{ref_label} (same sequences)")
    top.set_ylabel("mean bounded slowdown\n(256-job training sequences,\n20-epoch running mean)")
    top.set_title(title, fontsize=9)
    top.legend(fontsize=8)
    sel = [c for c in curve if c["select_greedy"] != ""]
    bottom.plot([c["episodes"] for c in sel], [c["select_greedy"] for c in sel], "o-", label="agent, greedy")
    bottom.axhline(ref_train, color="grey", ls="--", label=f"{ref_label}")
    bottom.set_ylabel("mean bounded slowdown\n(15 training windows)")
    bottom.set_xlabel("training episodes")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_csv(path: Path, rows: list[dict]) -> None:
    """Rows as a CSV with the first row's keys as header."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def train_and_test(args) -> int:
    """Train for ``--cpu-minutes``, select on the training windows, test once; print and write the results."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    cpu0, wall0 = time.process_time(), time.time()
    setup = Setup(args.trace)
    ref_train = float(np.mean(setup.heuristics_train[setup.best_train]))
    print(f"{args.trace}: {len(setup.train)} training windows, {len(setup.test)} test windows of {LENGTH} jobs "
          f"(options seed {setup.options.seed}); test windows start at usable jobs "
          f"{', '.join(str(w.first_job) for w in setup.test)}")
    print(f"best heuristic on the training windows: {setup.best_train} ({ref_train:.2f}); agent: "
          f"{setup.backfilling} with backfill ordering '{setup.ordering}', normalisers "
          f"{setup.normalisers[0]:.0f} s, {setup.normalisers[1]:.0f} cores", flush=True)
    write_csv(out / "heuristics_train.csv",
              [{"policy": k, METRIC: float(np.mean(v)), **{f"window_{w.index}": x for w, x in zip(setup.train, v)}}
               for k, v in sorted(setup.heuristics_train.items(), key=lambda kv: np.mean(kv[1]))])
    net = RaggedKernel(len(BACKFILL_SLOT_FEATURES), 2)
    opt = torch.optim.Adam(net.kernel.parameters(), lr=args.pi_lr)
    starts = [(w.first_job + k * STRIDE) for w in setup.train for k in range((LENGTH - SEQUENCE) // STRIDE + 1)]
    imitation_loss = None
    if args.imitate_steps:   # start from the chosen heuristic: behaviour cloning on the training sequences
        samples = expert_samples(setup, starts, rng)
        imitation_loss = imitate(net, samples, rng, args.imitate_steps, args.imitate_lr)
        print(f"behaviour cloning of '{setup.ordering}' heads: {len(samples)} decisions, {args.imitate_steps} steps, "
              f"loss {imitation_loss:.3f}, {time.process_time() - cpu0:.0f} CPU-s", flush=True)
    curve: list[dict] = []
    best = (np.inf, None, -1)
    episodes = epoch = 0
    while True:
        spent = time.process_time() - cpu0 >= args.cpu_minutes * 60
        select = ""
        if epoch % args.select_every == 0 or spent:   # the model as it is before this epoch's update
            scores, _ = ragged_numpy(net)
            value = float(np.mean(greedy_mean(setup, setup.train, scores)))
            select = round(value, 3)
            if value < best[0]:
                best = (value, {k: v.clone() for k, v in net.state_dict().items()}, epoch)
        if spent:
            curve.append({"epoch": epoch, "episodes": episodes, "train_sampled": "", "train_reference": "",
                          "select_greedy": select, "pi_iters": "", "kl": "",
                          "cpu_s": round(time.process_time() - cpu0, 1), "wall_s": round(time.time() - wall0, 1)})
            break
        scores, _ = ragged_numpy(net)
        trajs, bslds, refs = [], [], []
        for _ in range(args.sequences):
            start = int(starts[rng.integers(len(starts))])
            env = setup.env(start, SEQUENCE)
            for _ in range(args.group):
                steps, bsld = rollout(env, scores, rng, greedy=False)
                trajs.append(steps)
                bslds.append(bsld)
            refs.append(setup.reference_on(start, SEQUENCE))
        stats = ppo_update(net, opt, None, group_batch(trajs, 1.0, 0.97, args.group), pi_iters=args.pi_iters,
                           v_iters=0)
        curve.append({"epoch": epoch, "episodes": episodes, "train_sampled": float(np.mean(bslds)),
                      "train_reference": float(np.mean(refs)), "select_greedy": select,
                      "pi_iters": stats["pi_iters"], "kl": round(stats["kl"], 5),
                      "cpu_s": round(time.process_time() - cpu0, 1), "wall_s": round(time.time() - wall0, 1)})
        episodes += len(trajs)
        c = curve[-1]
        print(f"epoch {epoch:3d}  episodes {episodes:5d}  sampled {c['train_sampled']:8.1f}  "
              f"({setup.best_train.split('-')[0]} {c['train_reference']:8.1f})  "
              f"{'' if select == '' else f'greedy on training windows {select:8.2f}  '}"
              f"pi iters {stats['pi_iters']:2d}  {c['cpu_s']:6.0f} CPU-s", flush=True)
        epoch += 1
    train_cpu = (time.process_time() - cpu0) / 60
    net.load_state_dict(best[1])
    torch.save(net.state_dict(), out / "model.pt")
    write_csv(out / "training.csv", curve)
    if len(curve) > 1:
        plot(curve, out / "training.png", f"kernel PPO on HDeepRM-BackfillSlot-v0, {args.trace}, seed {args.seed}\n"
             f"({setup.backfilling}, backfill ordering '{setup.ordering}')", setup.best_train, ref_train)
    # ---- the test, once
    scores, _ = ragged_numpy(net)
    agent = greedy_mean(setup, setup.test, scores)
    heur, best_test, a, b, gain = test_table(setup.options, setup.test, "kernel PPO agent (greedy)", agent, out)
    (out / "run.json").write_text(json.dumps({
        "trace": args.trace, "seed": args.seed, "cpu_minutes_budget": args.cpu_minutes,
        "cpu_minutes_training": train_cpu, "epochs": epoch, "episodes": episodes,
        "imitation_loss": imitation_loss, "selected_epoch": best[2], "selected_train_mean": best[0],
        "best_train_heuristic": setup.best_train,
        "best_train_heuristic_mean": ref_train, "backfilling": setup.backfilling, "backfill_ordering": setup.ordering,
        "normalisers": setup.normalisers, "windows": [vars(w) for w in setup.plan.windows],
        "agent_test_mean": a, "best_test_heuristic": best_test, "best_test_heuristic_mean": b,
        "gain_percent": gain, "args": vars(args)}, indent=1))
    print(f"\nseed {args.seed}: {episodes} training episodes of {SEQUENCE} jobs, {epoch} epochs, {train_cpu:.1f} "
          f"CPU-minutes before the test; selected epoch {best[2]} (greedy mean on the training windows "
          f"{best[0]:.2f}, {setup.best_train} {ref_train:.2f})")
    print(f"{'test window (first usable job)':<32} {'agent':>10} {best_test:>45}")
    for w, x, y in zip(setup.test, agent, heur[best_test]):
        print(f"{w.index:>4} ({w.first_job:>6})                  {x:10.2f} {y:45.2f}")
    print(f"{'mean':<32} {a:10.2f} {b:45.2f}")
    print(f"gain over the best heuristic of the test windows ({best_test}): {gain:+.1f} %  "
          f"(target >= +5 %, issue 36); {train_cpu:.1f} CPU-minutes of training; "
          f"{time.time() - wall0:.0f} s wall in all")
    return 0


def test_table(options, test, label: str, agent: list[float], out: Path):
    """Every heuristic on the test windows beside the agent's values there; writes ``test.csv``.

    Returns:
        ``(heuristics, best_test, agent_mean, best_mean, gain_percent)``: label -> values per test window, the
        best heuristic of the test windows, the two means and (best - agent) / best x 100.
    """
    heur = table(options, test)
    best_test = min(heur, key=lambda k: np.mean(heur[k]))
    rows = [{"policy": label, METRIC: float(np.mean(agent)), **{f"window_{w.index}": x for w, x in zip(test, agent)}}]
    rows += [{"policy": k, METRIC: float(np.mean(v)), **{f"window_{w.index}": x for w, x in zip(test, v)}}
             for k, v in sorted(heur.items(), key=lambda kv: np.mean(kv[1]))]
    write_csv(out / "test.csv", rows)
    a, b = float(np.mean(agent)), float(np.mean(heur[best_test]))
    return heur, best_test, a, b, (b - a) / b * 100


def seed_arguments(p: argparse.ArgumentParser, minutes: float, outdir: str) -> None:
    """The options every held-out command shares: ``--trace``, ``--seed``, ``--cpu-minutes``, ``-o``."""
    p.add_argument("--trace", choices=sorted(TRACES), default="sdsc_sp2")
    p.add_argument("--seed", type=int, default=0, help="training seed (the windows do not depend on it)")
    p.add_argument("--cpu-minutes", type=float, default=minutes,
                   help=f"CPU budget before the test (default {minutes:g})")
    p.add_argument("-o", "--outdir", default=None, help=f"default {outdir}/TRACE_sSEED")


def aggregate(dirs: list[str]) -> int:
    """Mean ± sd over the seeds' ``run.json``."""
    runs = [json.loads((Path(d) / "run.json").read_text()) for d in dirs]
    agent = np.array([r["agent_test_mean"] for r in runs])
    gains = np.array([r["gain_percent"] for r in runs])
    for r in runs:
        print(f"{r['trace']} seed {r['seed']}: agent {r['agent_test_mean']:.2f}, best heuristic "
              f"{r['best_test_heuristic']} {r['best_test_heuristic_mean']:.2f}, gain {r['gain_percent']:+.1f} %, "
              f"{r['cpu_minutes_training']:.1f} CPU-min, selected epoch {r['selected_epoch']}")
    sd = agent.std(ddof=1) if len(runs) > 1 else 0.0
    gsd = gains.std(ddof=1) if len(runs) > 1 else 0.0
    bests = {r["best_test_heuristic"] for r in runs}
    print(f"{len(runs)} seeds: agent {agent.mean():.2f} ± {sd:.2f} (sd) against {', '.join(sorted(bests))} "
          f"{runs[0]['best_test_heuristic_mean']:.2f}; gain {gains.mean():+.1f} ± {gsd:.1f} % "
          "(target >= +5 %, issue 36)")
    return 0


def main() -> int:
    """Parse the command line; train and test one seed, or aggregate seeds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    seed_arguments(p, 30.0, "runs/heldout")
    p.add_argument("--sequences", type=int, default=25, help="training sequences per epoch (default 25)")
    p.add_argument("--group", type=int, default=4, help="replays of each sequence (default 4)")
    p.add_argument("--pi-lr", type=float, default=3e-3)
    p.add_argument("--pi-iters", type=int, default=20)
    p.add_argument("--select-every", type=int, default=5, help="epochs between selection runs (default 5)")
    p.add_argument("--imitate-steps", type=int, default=2000,
                   help="behaviour-cloning steps before PPO (0: start from random weights; default 2000)")
    p.add_argument("--imitate-lr", type=float, default=3e-3)
    p.add_argument("--aggregate", nargs="+", metavar="DIR", help="print mean ± sd over these runs' outputs")
    args = p.parse_args()
    if args.aggregate:
        return aggregate(args.aggregate)
    args.outdir = args.outdir or f"runs/heldout/{args.trace}_s{args.seed}"
    return train_and_test(args)


if __name__ == "__main__":
    raise SystemExit(main())
