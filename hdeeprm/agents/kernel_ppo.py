"""RLScheduler's kernel network and PPO update, shared by the kernel-PPO benchmarks.

The agent of RLScheduler (Zhang et al., "RLScheduler: An Automated HPC Batch Job Scheduler Using
Reinforcement Learning", SC'20; https://github.com/DIR-LAB/deep-batch-scheduler, ``ppo-pick-jobs.py``):
one small MLP (the *kernel*) scores every shown job from its own features, a softmax over the shown jobs
picks one, so the policy does not depend on the jobs' order. Trajectories are lists of steps
``(rows, action, logp, value, reward, glob)``: ``rows`` (n, F) float32 the shown jobs' features,
``action`` the chosen row, ``logp`` its log-probability when sampled, ``value`` the critic's estimate,
``reward`` a float, ``glob`` (nb_global,) the critic's extra inputs.

Used by ``benchmarks/rlscheduler_ppo.py`` (RLScheduler's protocol) and ``benchmarks/heldout_ppo.py``
(HDeepRM's held-out windows, ``hdeeprm/HDeepRM-BackfillSlot-v0``). :func:`load_rlscheduler_model` puts one of
RLScheduler's own trained policies in the kernel and :func:`window_bounded_slowdowns` tests a kernel on an
RLScheduler environment's windows (``benchmarks/rlscheduler_shipped.py``).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from torch import nn


class RaggedKernel(nn.Module):
    """RLScheduler's kernel (F -> 32 -> 16 -> 8 -> 1 per shown job) and a critic on pooled job embeddings.

    Rows of all samples are stacked (``x`` (R, F), ``seg`` (R,) the sample of each row), so
    no empty slot is computed; a sample's softmax runs over its own rows.

    Args:
        nb_features: F, features per job (RLScheduler's 8 by default).
        nb_global: Per-sample inputs of the critic besides the pooled embeddings.
    """

    def __init__(self, nb_features: int = 8, nb_global: int = 2) -> None:
        super().__init__()
        self.kernel = nn.Sequential(nn.Linear(nb_features, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(),
                                    nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
        self.embed = nn.Sequential(nn.Linear(nb_features, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.value = nn.Sequential(nn.Linear(32 + nb_global, 32), nn.ReLU(), nn.Linear(32, 1))

    def log_probs(self, x, seg, nb, act_row):
        """Log-probability of each sample's action (nb,); ``act_row`` (nb,): the row of that action in ``x``."""
        score = self.kernel(x).squeeze(-1)
        top = torch.full((nb,), -1e30).scatter_reduce(0, seg, score.detach(), "amax", include_self=True)
        lse = torch.log(torch.zeros(nb).index_add(0, seg, torch.exp(score - top[seg]))) + top
        return score[act_row] - lse

    def values(self, x, seg, nb, glob):
        """V(s) of each sample (nb,): the critic on [mean, max] of the rows' embeddings and ``glob`` (nb, 2)."""
        h = self.embed(x)
        count = torch.zeros(nb).index_add(0, seg, torch.ones(len(seg))).clamp(min=1.0)
        mean = torch.zeros(nb, h.shape[1]).index_add(0, seg, h) / count[:, None]
        mx = torch.zeros(nb, h.shape[1]).scatter_reduce(0, seg[:, None].expand_as(h), h, "amax", include_self=True)
        return self.value(torch.cat([mean, mx, glob], 1)).squeeze(-1)


#: Their policy scope's dense layers, input to output (``ppo-pick-jobs.py`` l. 69-75), as the shipped arrays name them.
RLSCHEDULER_LAYERS = ("pi.dense", "pi.dense_1", "pi.dense_2", "pi.dense_3")


def load_rlscheduler_model(path: str | Path) -> RaggedKernel:
    """A :class:`RaggedKernel` whose kernel holds one of RLScheduler's shipped trained policies.

    The file holds the ``pi/`` scope of one of their TensorFlow 1
    checkpoints (``trained_models/`` of https://github.com/DIR-LAB/deep-batch-scheduler at commit
    ``cd433e3d62a01705f255bd48cb55b393862800e7``) as arrays ``pi.dense.kernel`` (8, 32), ``pi.dense.bias`` (32),
    ... ``pi.dense_3.kernel`` (8, 1), ``pi.dense_3.bias`` (1). A TensorFlow kernel multiplies from the right
    (``x @ kernel + bias``), so each becomes a ``Linear`` weight transposed. The critic (``embed``, ``value``) keeps
    its fresh weights: their checkpoints' value network is not shipped.

    Args:
        path: The ``.npz`` file.

    Returns:
        The network (float32 weights; score rows with :func:`ragged_numpy` or :meth:`RaggedKernel.log_probs`).

    Raises:
        AgentError: One line naming the file (and the key, when one is at fault): a file that is missing or not
            a NumPy ``.npz`` archive (a directory, a ``.npy`` array, a truncated or empty file), a missing key, an
            array of another shape, of a non-numeric dtype, or with a NaN or an infinity.
    """
    import zipfile

    from hdeeprm.errors import AgentError

    def refuse(why: str) -> AgentError:
        return AgentError(f"RLScheduler model {path}: {why}")

    try:
        with open(path, "rb") as file:        # np.load would leave a file open when the archive is truncated
            arrays = np.load(file, allow_pickle=False)
            if not isinstance(arrays, np.lib.npyio.NpzFile):
                raise refuse("a single NumPy array (.npy), not a .npz archive of their pi.dense*.kernel/.bias arrays")
            return _fill_kernel(RaggedKernel(8, 2), arrays, refuse)
    except FileNotFoundError:
        raise refuse("file not found") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:     # numpy's reason, its first sentence
        raise refuse(f"cannot read it as a NumPy .npz file ({str(exc).split('. ')[0] or type(exc).__name__})") from None


def _fill_kernel(net: RaggedKernel, arrays, refuse) -> RaggedKernel:
    """``net.kernel``'s layers from the open archive ``arrays`` (:func:`load_rlscheduler_model`)."""
    import zipfile

    for layer, name in zip([m for m in net.kernel if isinstance(m, nn.Linear)], RLSCHEDULER_LAYERS, strict=True):
        for key, param in ((f"{name}.kernel", layer.weight), (f"{name}.bias", layer.bias)):
            want = tuple(reversed(param.shape))     # a TensorFlow kernel is the transposed weight
            if key not in arrays.files:
                raise refuse(f"no array {key!r} (it has {', '.join(arrays.files) or 'none'})")
            try:
                value = arrays[key]
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
                raise refuse(f"{key} cannot be read ({exc or type(exc).__name__})") from None
            if value.shape != want:
                raise refuse(f"{key} has shape {value.shape}, the kernel needs {want}")
            if value.dtype.kind not in "iuf":
                raise refuse(f"{key} has dtype {value.dtype}, the kernel needs numbers (float32)")
            if not np.isfinite(value).all():
                raise refuse(f"{key} holds a NaN or an infinity")
            with torch.no_grad():
                param.copy_(torch.from_numpy(np.ascontiguousarray(value.T, dtype=np.float32)))
    return net


def ragged_numpy(net: RaggedKernel):
    """The two heads as NumPy functions of one state's shown rows (fast rollouts; the weights are copied).

    Returns:
        ``(scores, value)``: ``scores(rows)`` gives the kernel's score of each row of ``rows`` (n, F), float
        (n,); ``value(rows, glob)`` the critic's V(s), a float, from the rows and ``glob`` (nb_global,).
    """
    def layers(seq):
        return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                for m in seq if isinstance(m, nn.Linear)]
    kern, emb, val = layers(net.kernel), layers(net.embed), layers(net.value)

    def mlp(h, ws):
        for k, (w, b) in enumerate(ws):
            h = h @ w + b
            if k < len(ws) - 1:
                h = np.maximum(h, 0.0)
        return h

    def scores(rows: np.ndarray) -> np.ndarray:
        return mlp(rows, kern)[:, 0]

    def value(rows: np.ndarray, glob: np.ndarray) -> float:
        h = np.maximum(mlp(rows, emb), 0.0)
        return float(mlp(np.concatenate([h.mean(0), h.max(0), glob]), val)[0])
    return scores, value


def choose(rows: np.ndarray, scores, rng: np.random.Generator, greedy: bool) -> tuple[int, float]:
    """The kernel policy's choice among the shown jobs of one state.

    Args:
        rows: The shown jobs' features, float32 (n, F), n >= 1.
        scores: ``scores(rows)`` -> the kernel's score of each row, float (n,) (:func:`ragged_numpy`).
        rng: Draws the sampled choice.
        greedy: Take the highest score (log-probability reported as 0) instead of sampling.

    Returns:
        ``(row, log-probability)``: a softmax sample (RLScheduler's ``tf.multinomial``) and its
        log-probability; ``(0, 0.0)`` without scoring when one job is shown (no choice, no gradient).
    """
    if len(rows) == 1:
        return 0, 0.0
    z = scores(rows)
    if greedy:
        return int(np.argmax(z)), 0.0
    z = z - z.max()
    p = np.exp(z)
    p /= p.sum()
    action = int(rng.choice(len(rows), p=p))
    return action, float(np.log(p[action] + 1e-30))


def window_bounded_slowdowns(env, scores, starts: list[int], rng: np.random.Generator | None = None) -> list[float]:
    """The kernel policy on each window of an RLScheduler environment: its mean bounded slowdown per window.

    Args:
        env: A :class:`~hdeeprm.env.rlscheduler.RLSchedulerEnv` whose windows start at ``starts``.
        scores: ``scores(rows)`` -> the kernel's score of each shown job (:func:`ragged_numpy`).
        starts: First job of each window (e.g. :func:`~hdeeprm.workload.rlscheduler.sample_starts`).
        rng: Samples the choices (their test rule, ``tf.multinomial``); None: the highest score (argmax).

    Returns:
        Mean bounded slowdown (tau = 10 s, their definition) of each window, in ``starts``' order.
    """
    values = []
    for start in starts:
        obs, info = env.reset(options={"start": start})
        done = False
        while not done:
            action, _ = choose(obs[:len(env.shown)], scores, rng, rng is None)
            obs, _, done, _, info = env.step(action)
        values.append(float(info["metrics"]["mean_bounded_slowdown"]))
    return values


def group_batch(trajs, scale: float, lam: float, group: int = 1):
    """Stacked tensors for one PPO update from the epoch's trajectories (gamma 1, their ``lam``).

    ``group`` > 1: consecutive groups of ``group`` trajectories replay one sequence; every step's
    advantage is then its trajectory's return minus the mean return of the group's others
    (a baseline that depends on the sequence only, so the gradient stays unbiased), not GAE.
    """
    rows, seg, act_row, logp, adv, ret, glob, choice, offset = [], [], [], [], [], [], [], [], 0
    totals = np.array([sum(s[4] for s in steps) / scale for steps in trajs])
    for k, steps in enumerate(trajs):
        rewards = np.array([s[4] for s in steps]) / scale
        if group > 1:
            mates = totals[k - k % group:k - k % group + group]
            gae = np.full(len(steps), totals[k] - (mates.sum() - totals[k]) / (group - 1))
        else:
            values = np.array([s[3] for s in steps] + [0.0])
            deltas = rewards + values[1:] - values[:-1]
            gae = np.zeros(len(steps))
            acc = 0.0
            for t in range(len(steps) - 1, -1, -1):
                acc = deltas[t] + lam * acc
                gae[t] = acc
        to_go = np.cumsum(rewards[::-1])[::-1]          # their rewards-to-go, gamma 1
        for (r, a, lp, _, _, g), ad, rt in zip(steps, gae, to_go, strict=True):
            rows.append(r)
            seg.append(np.full(len(r), len(ret)))
            act_row.append(offset + a)
            offset += len(r)
            logp.append(lp)
            adv.append(ad)
            ret.append(rt)
            glob.append(g)
            choice.append(len(r) > 1)
    t = torch.from_numpy
    return {"x": t(np.concatenate(rows)), "seg": t(np.concatenate(seg)), "act_row": torch.tensor(act_row),
            "logp": torch.tensor(logp, dtype=torch.float32), "adv": torch.tensor(adv, dtype=torch.float32),
            "ret": torch.tensor(ret, dtype=torch.float32), "glob": t(np.stack(glob)),
            "choice": torch.tensor(choice)}


def ppo_update(net, pi_opt, v_opt, batch, clip=0.2, pi_iters=80, v_iters=80, target_kl=0.01):
    """Their PPO update (``ppo-pick-jobs.py`` l. 356-376): full-batch Adam steps, KL early stop, then the critic."""
    nb = len(batch["ret"])
    keep = batch["choice"]
    # the policy batch: samples with a choice only (a single shown job has log pi = 0 whatever the weights)
    rows_keep = keep[batch["seg"]]
    renum = torch.cumsum(keep.long(), 0) - 1
    x_pi, seg_pi = batch["x"][rows_keep], renum[batch["seg"][rows_keep]]
    first_row = torch.zeros(nb, dtype=torch.long)
    first_row[1:] = torch.cumsum(torch.bincount(batch["seg"], minlength=nb), 0)[:-1]
    act_pi = (batch["act_row"] - first_row)[keep]
    start_pi = torch.zeros(int(keep.sum()), dtype=torch.long)
    start_pi[1:] = torch.cumsum(torch.bincount(seg_pi, minlength=int(keep.sum())), 0)[:-1]
    act_row_pi = start_pi + act_pi
    adv = (batch["adv"][keep] - batch["adv"][keep].mean()) / (batch["adv"][keep].std() + 1e-8)
    logp_old, nb_pi = batch["logp"][keep], int(keep.sum())
    stop = pi_iters
    for i in range(pi_iters):
        logp = net.log_probs(x_pi, seg_pi, nb_pi, act_row_pi)
        ratio = torch.exp(logp - logp_old)
        loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
        pi_opt.zero_grad()
        loss.backward()
        pi_opt.step()
        kl = (logp_old - logp.detach()).mean().item()
        if kl > 1.5 * target_kl:
            stop = i + 1
            break
    v_loss = torch.tensor(math.nan)
    for _ in range(v_iters):
        v = net.values(batch["x"], batch["seg"], nb, batch["glob"])
        v_loss = ((v - batch["ret"]) ** 2).mean()
        v_opt.zero_grad()
        v_loss.backward()
        v_opt.step()
    return {"pi_iters": stop, "kl": kl, "v_loss": float(v_loss.item())}


def plot_curve(curve: list[dict], path: Path, title: str, refs: dict[str, str], window: int = 20) -> None:
    """The learning curve as a PNG: running means over ``window`` epochs, and the agent / first reference ratio."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def running(values: np.ndarray) -> np.ndarray:
        return np.array([values[max(0, i - window + 1):i + 1].mean() for i in range(len(values))])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    x = [c["episodes"] for c in curve]
    agent = np.array([c["train_mean_bounded_slowdown"] for c in curve])
    top.plot(x, running(agent), label="agent (sampled)")
    for column, label in refs.items():
        top.plot(x, running(np.array([c[column] for c in curve])), "--", label=label)
    top.set_ylabel(f"mean bounded slowdown\n(training sequences, {window}-epoch mean)")
    top.set_title(title, fontsize=10)
    top.legend()
    column, label = next(iter(refs.items()))
    ref = np.array([c[column] for c in curve])
    bottom.plot(x, [agent[max(0, i - window + 1):i + 1].sum() / ref[max(0, i - window + 1):i + 1].sum()
                    for i in range(len(curve))])
    bottom.axhline(1.0, color="grey", lw=0.8)
    bottom.set_ylabel(f"agent / {label.split()[0]}")
    bottom.set_xlabel("training episodes")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
