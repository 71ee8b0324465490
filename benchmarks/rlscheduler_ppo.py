"""A job-slot PPO agent in RLScheduler's style, on RLScheduler's SDSC-SP2 windows: two protocols.

What it does (one command each, CPU)::

    python benchmarks/rlscheduler_ppo.py --protocol rlscheduler [--backfilling] --cpu-minutes 35 \
        --group 4 --pi-lr 3e-3 --pi-iters 20 --seed 0
    python benchmarks/rlscheduler_ppo.py --minutes 8 --seed 0 [--wait]        # JobSlot-v0, greedy semantics

* **Data** (RLScheduler's protocol, :mod:`hdeeprm.workload.rlscheduler`): SDSC-SP2 read
  their way; training episodes are 256-job sequences whose starts are drawn as their
  ``HPCEnv.reset`` draws them (``randint(256, 10000 - 256 - 1)``, ``HPCSimPickJobs.py``
  l. 298-301, with the seeded generator of :func:`~hdeeprm.workload.rlscheduler.gym_random_state`);
  the test is their 10 windows of 1,024 jobs (seed 1, from the first 10,000 jobs). Their
  protocol draws both from the same first 10,000 jobs, so test windows overlap jobs seen
  in training (as in their paper); nothing is selected on them here: the last model is tested.

``--protocol rlscheduler`` (their SchedGym semantics):

* **Environment**: ``hdeeprm/RLScheduler-v0`` (:class:`~hdeeprm.env.rlscheduler.RLSchedulerEnv`):
  the agent names one of the first 128 queued jobs, seen through their 8 features; the
  scheduler commits to it (it waits until the job fits, with or without their greedy
  backfilling), on the loop that replays their heuristic table
  (:class:`~hdeeprm.run.rlscheduler.RLSScheduler`). Reward: minus each started job's bounded
  slowdown over 256, i.e. their ``rwd`` (minus the mean bounded slowdown) paid job by job.
* **Agent**: their kernel (8 -> 32 -> 16 -> 8 -> 1 on every shown job, softmax over the
  shown jobs), computed on the shown rows only (no padding to 128). PPO as their
  ``ppo-pick-jobs.py``: 100 trajectories an epoch, clip 0.2, KL early stop at 1.5 x 0.01,
  full-batch Adam steps, gamma 1; by default also their learning rates (3e-4, critic 1e-3),
  80 + 80 steps and GAE(0.97) with a critic (an MLP on the mean and max of per-job embeddings,
  the queue length and the share of the sequence not started yet). ``--group K`` replays each
  drawn sequence K times and uses the mean return of the other K - 1 as the baseline (the
  sequence decides most of the return, which their critic, seeing only the queue, cannot tell;
  a baseline that depends on the sequence only keeps the gradient unbiased), with no critic.
  Decisions with one shown job carry no policy gradient and are left out of the policy batch.
* **Test**: the last model on their 10 windows, sampled as their ``compare-make-table.py``
  samples (``tf.multinomial``) and by argmax, beside :func:`~hdeeprm.run.rlscheduler.replay`'s
  five heuristics on the same windows (their table's cells) and their published RL column.
* **Output** (``-o``): ``training.csv`` and ``training.png`` (per epoch: the sampled agent's
  mean bounded slowdown on its training sequences beside ``rls_f1`` and ``rls_sjf`` on the
  same sequences), ``test.csv`` (per window), ``model.pt``.

``--protocol jobslot`` (the first attempt, kept as it was):

* **Environment**: ``HDeepRM-JobSlot-v0`` (:class:`~hdeeprm.env.job_slot.JobSlotEnv`) on
  ``platforms/sdsc_sp2.json`` (128 cores), one window per episode
  (:func:`~hdeeprm.workload.rlscheduler.window_workload`). The agent names one of the first
  128 queued jobs; a job that fits starts now, a job that does not fit means *wait* to the next
  event. Unlike RLScheduler's SchedGym, a chosen job that does not fit is not committed to, and
  any fitting job may start (so there is no "without backfilling" variant of this agent).
* **Agent**: the kernel on JobSlot's 5 features; the critic is an MLP on the mean and max of
  the slots' 8-wide embeddings. PPO with one terminal reward: the episode's mean bounded
  slowdown relative to that of ``first`` + ``greedy`` on the same window, ``(b - x) / b``.
* **Output**: ``training.csv`` and the test bounded slowdown per window and its mean, beside the
  heuristics of the same engine and windows, and the CPU-minutes used.
"""
from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from hdeeprm.agents.kernel_ppo import RaggedKernel, choose, plot_curve, ragged_numpy, window_bounded_slowdowns
from hdeeprm.agents.kernel_ppo import group_batch as rls_batch
from hdeeprm.agents.kernel_ppo import ppo_update as rls_update
from hdeeprm.decision.actions import action_index
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm.env.job_slot import SLOT_FEATURES, JobSlotEnv
from hdeeprm.platform.loader import load_platform
from hdeeprm.run.episode import Episode
from hdeeprm.run.rlscheduler import RLS_NB_WINDOWS, RLS_SEED, RLS_WINDOW_LENGTH
from hdeeprm.workload.rlscheduler import gym_random_state, read_rlscheduler_swf, sample_starts, window_workload

ROOT = Path(__file__).resolve().parents[1]
TRACE = Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared")) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"
PLATFORM = ROOT / "platforms" / "sdsc_sp2.json"
SLOTS = 128
TRAIN_LEN = 256          # their JOB_SEQUENCE_SIZE (HPCSimPickJobs.py l. 31)
FIRST_JOBS = 10000       # their batch_job_slice for SDSC-SP2 (make_table_script.py l. 3)
NB_F = len(SLOT_FEATURES)
NB_RLS = 8               # their JOB_FEATURES (hdeeprm.env.rlscheduler.RLS_FEATURES)
NB_GLOBAL = 2            # the critic's extra inputs: shown jobs / 128, share of the sequence not started yet
#: RLScheduler's published RL column for SDSC-SP2 (README table): without, with backfilling.
PUBLISHED_RL = {False: 466.44, True: 397.82}


class KernelPolicy(nn.Module):
    """Per-slot scorer (the kernel) and a pooled critic."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(NB_F, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(),
                                   nn.Linear(16, 8), nn.ReLU())
        self.score = nn.Linear(8, 1)
        self.critic = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (B, K) with empty slots at -1e9, and values (B,)."""
        h = self.embed(obs)                                   # (B, K, 8)
        logits = self.score(h).squeeze(-1).masked_fill(~mask, -1e9)
        m = mask.unsqueeze(-1).float()
        mean = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        mx = h.masked_fill(~mask.unsqueeze(-1), -1e9).max(1).values
        return logits, self.critic(torch.cat([mean, mx], -1)).squeeze(-1)


def numpy_forward(net: KernelPolicy):
    """The network as NumPy functions of one observation (fast rollouts; the weights are copied)."""
    lin = [m for m in net.embed if isinstance(m, nn.Linear)]
    w = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in lin]
    ws, bs = net.score.weight.detach().numpy().T.copy(), net.score.bias.detach().numpy().copy()
    c = [m for m in net.critic if isinstance(m, nn.Linear)]
    cw = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in c]

    def forward(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, float]:
        h = obs
        for wi, bi in w:
            h = np.maximum(h @ wi + bi, 0.0)
        logits = np.where(mask, (h @ ws + bs)[:, 0], -1e9)
        m = mask[:, None]
        mean = (h * m).sum(0) / max(mask.sum(), 1)
        mx = np.where(m, h, -1e9).max(0)
        v = np.maximum(np.concatenate([mean, mx]) @ cw[0][0] + cw[0][1], 0.0) @ cw[1][0] + cw[1][1]
        return logits, float(v[0])
    return forward


def run_episode(env: JobSlotEnv, forward, rng: np.random.Generator, greedy: bool, wait: bool):
    """One episode; returns (rows of (obs, mask, action, logp, value), bsld)."""
    obs, info = env.reset(seed=int(rng.integers(2**31 - 1)))
    rows: list = []
    done = False
    while not done:
        if wait:     # any shown job; one that does not fit means wait
            mask = np.zeros(SLOTS, dtype=bool)
            mask[:min(info["queue"], SLOTS)] = True
        else:        # JobSlot's mask: the jobs that fit now
            mask = info["action_mask"]
        logits, value = forward(obs, mask)
        z = logits - logits.max()
        p = np.exp(z)
        p /= p.sum()
        action = int(np.argmax(logits)) if greedy else int(rng.choice(SLOTS, p=p))
        rows.append((obs, mask, action, float(np.log(p[action] + 1e-30)), value))
        obs, _, done, truncated, info = env.step(action)
        done = done or truncated
    bsld = float(info["metrics"]["mean_bounded_slowdown"])
    return rows, bsld


def baseline_bsld(hierarchy, workload) -> float:
    """Mean bounded slowdown of ``first`` + ``greedy`` on a window (the reward's reference)."""
    ep = Episode(hierarchy, workload, actions=[action_index("first", "high_gflops")], record=False,
                 strategy=make_start_strategy("greedy"))
    while ep.advance():
        ep.apply(0)
    return float(ep.metrics()["mean_bounded_slowdown"])


def ppo_update(net, opt, batch, clip=0.2, iters=10, target_kl=0.01):
    """Clipped PPO on one batch (obs, mask, act, logp, adv, ret); policy and value trained jointly."""
    obs, mask, act, logp_old, adv, ret = batch
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    for _ in range(iters):
        logits, value = net(obs, mask)
        dist = torch.distributions.Categorical(logits=logits)
        logp = dist.log_prob(act)
        ratio = torch.exp(logp - logp_old)
        pi_loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
        v_loss = ((value - ret) ** 2).mean()
        opt.zero_grad()
        (pi_loss + 0.5 * v_loss).backward()
        opt.step()
        if (logp_old - logp).mean().item() > 1.5 * target_kl:
            break


# ------------------------------------------------------------------ the RLScheduler protocol (SchedGym semantics)
def rls_episode(env, scores, value, rng, greedy: bool, start: int | None = None):
    """One episode of the RLScheduler env; (steps of (rows, action, logp, value, reward, glob), metrics)."""
    obs, info = env.reset(options=None if start is None else {"start": start})
    steps = []
    done = False
    while not done:
        n = len(env.shown)
        rows = obs[:n]
        glob = np.array([n / 128, 1.0 - info["started"] / env.length], dtype=np.float32)
        action, logp = choose(rows, scores, rng, greedy)
        v = value(rows, glob) if value is not None else 0.0
        obs, reward, done, _, info = env.step(action)
        steps.append((rows, action, logp, v, reward, glob))
    return steps, info["metrics"]


def main_rlscheduler(args) -> int:
    """Train in the RLScheduler protocol for ``--cpu-minutes``, test the last model on their 10 windows."""
    from hdeeprm.env.rlscheduler import RLSchedulerEnv
    from hdeeprm.run.rlscheduler import RLS_KEYS, replay

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    trace = read_rlscheduler_swf(TRACE)
    env = RLSchedulerEnv(trace, length=TRAIN_LEN, backfilling=args.backfilling, first_jobs=FIRST_JOBS,
                         sjf_filter=tuple(args.sjf_filter) if args.sjf_filter else None)
    env.reset(seed=args.seed)            # seeds their draw of training sequences
    net = RaggedKernel(NB_RLS, NB_GLOBAL)
    pi_opt = torch.optim.Adam(net.kernel.parameters(), lr=args.pi_lr)
    v_opt = torch.optim.Adam([*net.embed.parameters(), *net.value.parameters()], lr=args.vf_lr)
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    variant = "with backfilling" if args.backfilling else "without backfilling"
    cache: dict[tuple[str, int], float] = {}

    def heuristic(key: str, start: int) -> float:
        if (key, start) not in cache:
            cache[key, start] = replay(trace, start, TRAIN_LEN, key, args.backfilling).bounded_slowdown
        return cache[key, start]

    curve = []
    cpu0, wall0 = time.process_time(), time.time()
    episodes = decisions = 0
    while time.process_time() - cpu0 < args.cpu_minutes * 60:
        scores, value = ragged_numpy(net)
        trajs, bslds, f1s, sjfs = [], [], [], []
        for k in range(args.trajs):
            again = None if k % args.group == 0 else env.sim.start
            steps, metrics = rls_episode(env, scores, value if args.group == 1 else None, rng, greedy=False,
                                         start=again)
            trajs.append(steps)
            bslds.append(metrics["mean_bounded_slowdown"])
            start = env.sim.start
            f1s.append(heuristic("rls_f1", start))
            sjfs.append(heuristic("rls_sjf", start))
        stats = rls_update(net, pi_opt, v_opt, rls_batch(trajs, args.reward_scale, 0.97, args.group),
                           pi_iters=args.pi_iters, v_iters=args.v_iters if args.group == 1 else 0)
        episodes += len(trajs)
        decisions += sum(len(t) for t in trajs)
        curve.append({"epoch": len(curve), "episodes": episodes, "decisions": decisions,
                      "train_mean_bounded_slowdown": float(np.mean(bslds)),
                      "train_rls_f1_bounded_slowdown": float(np.mean(f1s)),
                      "train_rls_sjf_bounded_slowdown": float(np.mean(sjfs)),
                      "pi_iters": stats["pi_iters"], "kl": round(stats["kl"], 5), "v_loss": round(stats["v_loss"], 4),
                      "cpu_s": round(time.process_time() - cpu0, 1), "wall_s": round(time.time() - wall0, 1)})
        c = curve[-1]
        print(f"epoch {c['epoch']:3d}  episodes {episodes:5d}  bsld {c['train_mean_bounded_slowdown']:8.1f}  "
              f"(f1 {c['train_rls_f1_bounded_slowdown']:8.1f}, sjf {c['train_rls_sjf_bounded_slowdown']:8.1f})  "
              f"pi iters {stats['pi_iters']:2d}  kl {stats['kl']:.4f}  v loss {stats['v_loss']:9.3f}  "
              f"{c['cpu_s']:6.0f} CPU-s", flush=True)
    train_cpu = (time.process_time() - cpu0) / 60
    with open(out / "training.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(curve[0]))
        writer.writeheader()
        writer.writerows(curve)
    plot_curve(curve, out / "training.png", f"kernel PPO, RLScheduler protocol, SDSC-SP2, {variant}, seed {args.seed}",
               {"train_rls_f1_bounded_slowdown": "rls_f1 (same sequences)",
                "train_rls_sjf_bounded_slowdown": "rls_sjf (same sequences)"})
    torch.save(net.state_dict(), out / "model.pt")
    starts = sample_starts(len(trace), RLS_WINDOW_LENGTH, RLS_NB_WINDOWS, RLS_SEED, FIRST_JOBS)
    test_env = RLSchedulerEnv(trace, length=RLS_WINDOW_LENGTH, backfilling=args.backfilling, starts=starts)
    scores, _ = ragged_numpy(net)
    # their test (compare-make-table.py l. 105-116) samples the policy (tf.multinomial; the argmax line is
    # commented out): both are reported, sampled with a generator seeded by --seed
    test_rng = np.random.default_rng(args.seed)
    rows = []
    for label, greedy in (("kernel PPO agent (sampled, their test rule)", False), ("kernel PPO agent (argmax)", True)):
        values = window_bounded_slowdowns(test_env, scores, starts, None if greedy else test_rng)
        rows.append({"policy": label, "mean_bounded_slowdown": float(np.mean(values)),
                     **{f"window_{w}": x for w, x in enumerate(values)}})
    agent = [rows[0]["mean_bounded_slowdown"]]
    for key in RLS_KEYS:
        values = [replay(trace, s, RLS_WINDOW_LENGTH, key, args.backfilling).bounded_slowdown for s in starts]
        rows.append({"policy": key, "mean_bounded_slowdown": float(np.mean(values)),
                     **{f"window_{w}": x for w, x in enumerate(values)}})
    with open(out / "test.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nseed {args.seed}, {variant}: {episodes} training episodes of {TRAIN_LEN} jobs, {decisions} decisions, "
          f"{len(curve)} epochs, {train_cpu:.1f} CPU-minutes of training "
          f"({time.time() - wall0:.0f} s wall with the test)")
    print(f"test: RLScheduler's 10 SDSC-SP2 windows of 1024 jobs (starts {', '.join(map(str, starts))}), last model")
    print(f"{'policy (RLScheduler protocol, ' + variant + ')':<50} mean bounded slowdown")
    for row in rows:
        print(f"{row['policy']:<50} {row['mean_bounded_slowdown']:10.2f}")
    published = PUBLISHED_RL[args.backfilling]
    print(f"{'RLScheduler published RL column':<50} {published:10.2f}")
    print(f"agent (sampled) / published: {np.mean(agent) / published:.3f}")
    return 0


def main_jobslot(args) -> int:
    """Train on JobSlot-v0 for ``--minutes`` wall-clock, test on their 10 windows, print the table."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    trace = read_rlscheduler_swf(TRACE)
    hierarchy = load_platform(PLATFORM)
    draw = gym_random_state(args.seed)
    net = KernelPolicy()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    curve = []
    wall0, cpu0 = time.time(), time.process_time()
    episodes = steps = 0
    # Terminal reward: (b - x) / b, x the episode's mean bounded slowdown and b that of first+greedy on the same
    # window (their "rwd2" compares with the best heuristic; relative, as slowdowns span 1 to 10^4 across windows).
    while time.time() - wall0 < args.minutes * 60:
        trajs, bslds, bases = [], [], []
        forward = numpy_forward(net)
        for _ in range(args.episodes_per_update):
            start = int(draw.randint(TRAIN_LEN, FIRST_JOBS - TRAIN_LEN - 1))
            workload = window_workload(trace, start, TRAIN_LEN)
            env = JobSlotEnv(platform=hierarchy, workload=workload, nb_slots=SLOTS)
            rows, bsld = run_episode(env, forward, rng, greedy=False, wait=args.wait)
            base = baseline_bsld(hierarchy, workload)
            trajs.append((rows, (base - bsld) / max(base, 1.0)))
            bslds.append(bsld)
            bases.append(base)
        obs, mask, act, logp, adv, ret = [], [], [], [], [], []
        for rows, reward in trajs:
            values = np.array([r[4] for r in rows] + [0.0])
            rewards = np.zeros(len(rows))
            rewards[-1] = reward
            deltas = rewards + values[1:] - values[:-1]
            gae = np.zeros(len(rows))
            acc = 0.0
            for t in range(len(rows) - 1, -1, -1):
                acc = deltas[t] + 0.97 * acc
                gae[t] = acc
            returns = gae + values[:-1]
            for (o, m, a, lp, _), g, r in zip(rows, gae, returns, strict=True):
                obs.append(o)
                mask.append(m)
                act.append(a)
                logp.append(lp)
                adv.append(g)
                ret.append(r)
        batch = (torch.from_numpy(np.stack(obs)), torch.from_numpy(np.stack(mask)), torch.tensor(act),
                 torch.tensor(logp, dtype=torch.float32), torch.tensor(adv, dtype=torch.float32),
                 torch.tensor(ret, dtype=torch.float32))
        ppo_update(net, opt, batch)
        episodes += len(trajs)
        steps += len(obs)
        curve.append({"update": len(curve), "episodes": episodes, "steps": steps,
                      "train_mean_bounded_slowdown": float(np.mean(bslds)),
                      "train_first_greedy_bounded_slowdown": float(np.mean(bases)),
                      "wall_s": round(time.time() - wall0, 1)})
        print(f"update {len(curve):3d}  episodes {episodes:5d}  steps {steps:7d}  "
              f"train bsld {np.mean(bslds):9.2f} (first+greedy {np.mean(bases):9.2f})  {time.time() - wall0:6.0f} s",
              flush=True)
    train_cpu = (time.process_time() - cpu0) / 60
    with open(out / "training.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(curve[0]))
        writer.writeheader()
        writer.writerows(curve)
    torch.save(net.state_dict(), out / "model.pt")
    starts = sample_starts(len(trace), RLS_WINDOW_LENGTH, RLS_NB_WINDOWS, RLS_SEED, FIRST_JOBS)
    agent = []
    forward = numpy_forward(net)
    for s in starts:
        env = JobSlotEnv(platform=hierarchy, workload=window_workload(trace, s, 1024), nb_slots=SLOTS)
        agent.append(run_episode(env, forward, rng, greedy=True, wait=args.wait)[1])
    print(f"\nseed {args.seed}: {episodes} training episodes of {TRAIN_LEN} jobs, {steps} decisions, "
          f"{train_cpu:.1f} CPU-minutes of training ({time.time() - wall0:.0f} s wall with the test)")
    print(f"test: RLScheduler's 10 SDSC-SP2 windows of 1024 jobs (starts {', '.join(map(str, starts))})")
    print(f"{'policy (HDeepRM engine, sdsc_sp2.json)':<44} mean bounded slowdown")
    print(f"{'kernel PPO agent (JobSlot-v0, argmax)':<44} {np.mean(agent):10.2f}   per window "
          f"{', '.join(f'{x:.1f}' for x in agent)}")
    for ordering in ("first", "shortest", "smallest", "f1"):
        for strategy in ("greedy", "easy_backfilling", "commit_head"):
            values = []
            for s in starts:
                ep = Episode(hierarchy, window_workload(trace, s, 1024), actions=[action_index(ordering,
                             "high_gflops")], record=False, strategy=make_start_strategy(strategy))
                while ep.advance():
                    ep.apply(0)
                values.append(ep.metrics()["mean_bounded_slowdown"])
            print(f"{ordering + '+' + strategy:<44} {np.mean(values):10.2f}")
    print("RLScheduler's published RL column (their SchedGym, commit semantics): 466.44 without backfilling, "
          "397.82 with")
    return 0


def main() -> int:
    """Parse the command line and run one of the two modes."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--protocol", choices=("jobslot", "rlscheduler"), default="jobslot",
                   help="jobslot: HDeepRM-JobSlot-v0, greedy semantics (default); rlscheduler: "
                        "hdeeprm/RLScheduler-v0, their commit semantics")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--outdir", default=None, help="default runs/rlscheduler_ppo[_rls[_bf]]")
    g = p.add_argument_group("jobslot mode")
    g.add_argument("--minutes", type=float, default=8.0, help="training wall-clock budget (default 8)")
    g.add_argument("--episodes-per-update", type=int, default=16)
    g.add_argument("--wait", action="store_true",
                   help="let the agent pick a job that does not fit (= wait to the next event); default: "
                        "JobSlot's mask, only jobs that fit now")
    g = p.add_argument_group("rlscheduler mode (defaults: theirs, ppo-pick-jobs.py)")
    g.add_argument("--backfilling", action="store_true", help="their --backfil 1")
    g.add_argument("--cpu-minutes", type=float, default=60.0, help="training CPU budget (process time; default 60)")
    g.add_argument("--trajs", type=int, default=100, help="trajectories per epoch (theirs: 100)")
    g.add_argument("--pi-lr", type=float, default=3e-4)
    g.add_argument("--vf-lr", type=float, default=1e-3)
    g.add_argument("--pi-iters", type=int, default=80, help="policy Adam steps per epoch, KL early stop (theirs: 80)")
    g.add_argument("--v-iters", type=int, default=80, help="critic Adam steps per epoch (theirs: 80)")
    g.add_argument("--reward-scale", type=float, default=100.0,
                   help="rewards are divided by it for the critic's targets (advantages are normalised anyway)")
    g.add_argument("--group", type=int, default=1,
                   help="trajectories per drawn sequence; > 1: each sequence is replayed that many times and the "
                        "others' mean return is the baseline (no critic); default 1: theirs, GAE with the critic")
    g.add_argument("--sjf-filter", type=float, nargs=2, default=None, metavar=("LOW", "HIGH"),
                   help="their trajectory filtering: train only on sequences whose rls_sjf bsld is in (LOW, HIGH)")
    args = p.parse_args()
    if args.protocol == "rlscheduler":
        args.outdir = args.outdir or ("runs/rlscheduler_ppo_rls" + ("_bf" if args.backfilling else ""))
        return main_rlscheduler(args)
    args.outdir = args.outdir or "runs/rlscheduler_ppo"
    return main_jobslot(args)


if __name__ == "__main__":
    raise SystemExit(main())
