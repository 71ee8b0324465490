"""Stable-Baselines3 on the GPU environments: train on the ``train`` scenarios, evaluate on held-out ones.

    pip install -e ".[sb3-contrib]"          # stable-baselines3 and sb3-contrib (MaskablePPO)
    python examples/sb3_gpu.py placement --steps 20000 --log runs/sb3-gpu
    python examples/sb3_gpu.py provisioning --steps 20000 --log runs/sb3-prov

``placement`` trains MaskablePPO (PPO without sb3-contrib) on ``hdeeprm/GpuPlacement-v0`` with the
easy -> hard curriculum and prints, per held-out ``test`` scenario, the mean JCT and queueing delay of
the trained policy (deterministic) beside ``best_fit``'s. ``provisioning`` trains PPO on
``hdeeprm/GpuProvisioning-v0`` (one task per run, ``--task``) and prints the grader score of the
trained policy beside the "hold" policy's. Training logs go to ``--log`` as SB3 writes them: CSV
(``progress.csv``) and, when the ``tensorboard`` package is installed, TensorBoard event files.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys


def _logger(folder: str | None):
    """SB3's logger writing CSV (and TensorBoard when installed) into ``folder``, else one writing nothing.

    Without a logger of its own, SB3's ``learn`` makes an empty log folder in the system's temp folder at every call.
    """
    from stable_baselines3.common.logger import Logger, configure

    if not folder:
        return Logger(folder=None, output_formats=[])

    formats = ["stdout", "csv"] + (["tensorboard"] if importlib.util.find_spec("tensorboard") else [])
    return configure(folder, formats)


def placement(args) -> int:
    """Train on the train split with a curriculum; compare with best_fit on the test split."""
    from stable_baselines3 import PPO

    from hdeeprm.env.gpu_placement import GpuPlacementEnv
    from hdeeprm.env.gpu_scenarios import scenarios

    try:
        from sb3_contrib import MaskablePPO as Algo
    except ImportError:
        Algo = PPO
    env = GpuPlacementEnv(scenario="train", curriculum=True, curriculum_episodes=20)
    model = Algo("MultiInputPolicy", env, n_steps=512, batch_size=128, seed=args.seed, verbose=0, device=args.device)
    model.set_logger(_logger(args.log))
    model.learn(total_timesteps=args.steps)
    print(f"{Algo.__name__} on GpuPlacement-v0, {args.steps} steps on the train scenarios")
    for scenario in scenarios("test"):
        if scenario.cluster().nb_nodes > env.nb_nodes:
            print(f"{scenario.name}: {scenario.cluster().nb_nodes} nodes, more than the MLP's {env.nb_nodes}: skipped")
            continue
        test = GpuPlacementEnv(scenario=[scenario.name], max_nodes=env.nb_nodes)
        for name in ("agent", "best_fit"):
            obs, info = test.reset(seed=args.seed)
            done = info["job"] < 0
            while not done:
                if name == "agent":
                    kwargs = {"action_masks": test.action_masks()} if Algo is not PPO else {}
                    action, _ = model.predict(obs, deterministic=True, **kwargs)
                else:
                    action = test.policy_node(info["job"])
                obs, _, done, _, info = test.step(int(action))
            m = info["metrics"]
            print(f"{name:9s} {scenario.name:17s} mean_jct {m['jct_mean']:9.0f} s  waiting "
                  f"{m['mean_waiting_time']:8.0f} s  skips overridden {info['skips_overridden']}")
    return 0


def provisioning(args) -> int:
    """Train PPO on one task; compare its grader score with the hold policy's."""
    from stable_baselines3 import PPO

    from hdeeprm.env.gpu_provisioning import ACTIONS, GpuProvisioningEnv

    env = GpuProvisioningEnv(task=args.task, max_steps=2000)
    model = PPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=args.seed, verbose=0, device=args.device)
    model.set_logger(_logger(args.log))
    model.learn(total_timesteps=args.steps)
    print(f"PPO on GpuProvisioning-v0 task {args.task}, {args.steps} steps")
    for name in ("agent", "hold"):
        obs, _ = env.reset(seed=args.seed)
        done = False
        while not done:
            action = model.predict(obs, deterministic=True)[0] if name == "agent" else ACTIONS.index("hold")
            obs, _, term, trunc, info = env.step(int(action))
            done = term or trunc
        print(f"{name:6s} score {info['score']:.3f}  spent {info['spent']:.0f} of {info['budget']:.0f} USD")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one of the two examples."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("env", choices=("placement", "provisioning"))
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--task", default="easy", help="provisioning task: easy, medium or hard")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log", help="folder of the SB3 logs (CSV, TensorBoard when installed)")
    p.add_argument("--device", default="auto",
                   help="torch device of the networks: auto (SB3's default: CUDA when present), cpu or cuda")
    args = p.parse_args(argv)
    if importlib.util.find_spec("stable_baselines3") is None:
        print("this example needs stable-baselines3: pip install -e '.[sb3-contrib]'", file=sys.stderr)
        return 2
    return placement(args) if args.env == "placement" else provisioning(args)


if __name__ == "__main__":
    sys.exit(main())
