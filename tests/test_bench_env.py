"""``benchmarks/bench_env.py``'s loops, on the shipped Lublin trace (no timing asserted)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from hdeeprm.env.environment import HDeepRMEnv

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_env", ROOT / "benchmarks" / "bench_env.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


class Recording(HDeepRMEnv):
    """The environment, with every step's action, reward, queue and clock kept."""

    def reset(self, *args, **kwargs):
        self.resets = getattr(self, "resets", 0) + 1
        return super().reset(*args, **kwargs)

    def step(self, action):
        out = super().step(action)
        self.seen = getattr(self, "seen", []) + [(action, out[1], out[4]["queue"], out[4]["time"])]
        return out


def test_the_episode_head_replays_the_same_states_in_windows_of_any_size():
    runs = []
    for jobs in (60, 300):
        env = Recording(platform=ROOT / "platforms" / "kth_sp2.json",
                        workload=ROOT / "workloads" / "lublin_500_100.swf", nb_jobs=jobs)
        seconds, episodes = bench.run(env, 50, seed=1, head=20)
        assert seconds > 0.0 and episodes == 0 and env.resets == 3 and len(env.seen) == 50   # 20 + 20 + 10
        assert env.seen[:20] == env.seen[20:40] and env.seen[40:] == env.seen[:10]
        runs.append(env.seen)
    # the first 20 steps see only the first jobs, in both windows (the observations differ: each window
    # scales its queue values by its own percentiles)
    assert runs[0] == runs[1]
    assert len({a for a, *_ in runs[0]}) > 1 and len({t for *_, t in runs[0]}) > 1
