"""Training through launch(): logs, checkpoints, seeding, and learning the toy's best pair."""
from __future__ import annotations

import json

import pytest

from hdeeprm.run.launch import launch

from tests.toy import AGENTS, TOY_OPTIONS

#: Toy: the best pairs spread the two jobs (high_mem_bw, positions 1 and 4): makespan 5.25 s.
BEST = (1, 4)


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "episodes"), [("reinforce", 100), ("actor_critic", 100), ("ppo", 100)])
def test_agent_learns_the_toys_best_pair(tmp_path, agent, episodes):
    """Within 100 episodes (seeded) the policy puts > 90 % on the best pairs and the makespan is 5.25 s."""
    result = launch(str(TOY_OPTIONS), agent_path=str(AGENTS / f"{agent}.py"), nb_runs=episodes, outdir=tmp_path,
                    quiet=True)
    probs = json.loads((tmp_path / "probs.json").read_text())
    last = probs["mean_per_episode"][-1]
    assert sum(last[i] for i in BEST) > 0.9
    assert [m["makespan"] for m in result.metrics[-5:]] == [5.25] * 5
    assert probs["actions"][1] == "shortest-high_mem_bw" and probs["actions"][4] == "first-high_mem_bw"


def test_logs_checkpoints_and_reproducibility(tmp_path):
    out1, out2, out3 = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    model = tmp_path / "m.pt"
    agent = str(AGENTS / "reinforce.py")
    launch(str(TOY_OPTIONS), agent_path=agent, nb_runs=8, outdir=out1, quiet=True, outmodel=str(model))
    launch(str(TOY_OPTIONS), agent_path=agent, nb_runs=8, outdir=out2, quiet=True)
    for name in ("rewards.log", "losses.log", "makespans.log", "probs.json", "episodes.csv"):
        assert (out1 / name).read_text() == (out2 / name).read_text(), name  # seeded: identical
    rewards = [float(x) for x in (out1 / "rewards.log").read_text().split()]
    makespans = [float(x) for x in (out1 / "makespans.log").read_text().split()]
    assert len(rewards) == len(makespans) == 8 and len((out1 / "losses.log").read_text().split()) == 8
    # One decision per episode: the reward is Σ GFLOP/s after it, which fixes the makespan.
    outcomes = {(round(r, 9), round(m, 9)) for r, m in zip(rewards, makespans)}
    assert outcomes <= {(6.6, round(21 / 3.3, 9)), (8.4, 5.25), (6.0, 7.0)}
    probs = json.loads((out1 / "probs.json").read_text())
    assert len(probs["mean_per_episode"]) == 8 and len(probs["probs"]) == 1 and len(probs["probs"][0]) == 5
    header = (out1 / "episodes.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "episode" and header[-2:] == ["reward", "loss"]
    # Reload and continue: the loaded model starts where the saved one ended.
    launch(str(TOY_OPTIONS), agent_path=agent, nb_runs=1, outdir=out3, quiet=True, inmodel=str(model))
    first_after = json.loads((out3 / "probs.json").read_text())["mean_per_episode"][0]
    assert first_after != json.loads((out1 / "probs.json").read_text())["mean_per_episode"][0]
