"""Train a PPO agent with Stable-Baselines3 on the registered PokeGym environment (docs/rl.md).

    python docs/train_sb3.py --envs 2 --timesteps 20000 --out runs/ppo

Each environment is its own world and evaluator processes, in a subprocess of its own (SubprocVecEnv,
started with "spawn"); the dense reward is progress toward the goal, +1 per success flag, +10 on success.
Needs the `train` extra and a PyTorch build for your machine (see docs/rl.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="q08_site_navigation", help="a task id (python main.py tasks list)")
    parser.add_argument("--envs", type=int, default=2, help="environments stepped in parallel")
    parser.add_argument("--timesteps", type=int, default=20_000, help="environment steps to train for")
    parser.add_argument("--n-steps", type=int, default=128, help="steps per environment between updates")
    parser.add_argument("--budget", type=int, default=200, help="steps before an episode is cut off")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/ppo"), help="where the model and a summary go")
    args = parser.parse_args(argv)

    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # "module:id": each spawned subprocess imports the module, which registers the environment there too.
    envs = make_vec_env("core.session.gym_env:PokeGym/Harborvale-v0", n_envs=args.envs, seed=args.seed,
                        vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "spawn"},
                        env_kwargs={"task_id": args.task, "width": 160, "height": 120, "step_budget": args.budget})
    try:
        model = PPO("CnnPolicy", envs, n_steps=args.n_steps, batch_size=min(64, args.n_steps * args.envs),
                    seed=args.seed, verbose=1)
        # The training log goes with the model: left to itself, SB3 makes an empty SB3-<date> folder in /tmp
        # at every run.
        model.set_logger(configure(str(args.out / "log"), ["stdout", "csv"]))
        model.learn(total_timesteps=args.timesteps)
        args.out.mkdir(parents=True, exist_ok=True)
        model.save(args.out / "model.zip")
        summary = {"task": args.task, "envs": args.envs, "timesteps": int(model.num_timesteps),
                   "episode_rewards": [float(info["r"]) for info in model.ep_info_buffer]}
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(f"trained {model.num_timesteps} steps; model in {args.out / 'model.zip'}")
    finally:
        envs.close()
    return 0


if __name__ == "__main__":  # required: each environment's subprocess is spawned and imports this file
    raise SystemExit(main())
