"""A Gymnasium environment for the built-in world (extra `rl`), with an optional dense reward.

Observations are RGB frames; actions index the profile's discrete action set. With `audio=True` they are a
`Dict` of the frame ("image") and the sound the step played ("audio": int16 PCM, (frames, channels), padded
with silence to the longest action's length; `info["audio_frames"]` says how much of it is the step's).
Without it the world runs silent, which saves the synthesis. The dense reward
(the paper lists reward design as future work; defined in core/session/reward.py, which the dataset
exporter shares) is: metres of progress toward the goal point, plus 1 for each success-relevant flag
that becomes set, plus 10 on success. Reward comes from evaluator samples; the observation never does.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.sample import StateSample
from core.evaluation.stepping import StepProtocol
from core.evaluation.tasks import Task, load_task
from core.game.builtin import BuiltinWorld
from core.paths import PROFILES_DIR, TASKS_DIR
from core.session.cpu_pinning import pin_to_cpu
from core.session.reward import Reading, RewardSpec, step_reward

# The world is lockstep: it stands still between steps, and every step's reading is asked for when the step
# ends (the step protocol's sample_now). The evaluator's own rhythm only watches for the world's exit, so it
# runs slowly: at 60 Hz, N environments' evaluators cost several percent of a core each for nothing.
EVALUATOR_HZ = 5.0


Observation = np.ndarray | dict[str, np.ndarray]


class PokeGymEnv(gym.Env[Observation, np.int64]):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(self, task_id: str = "q08_site_navigation", dense_reward: bool = True, width: int = 160,
                 height: int = 90, step_budget: int | None = None, render_mode: str | None = "rgb_array",
                 evaluator_hz: float = EVALUATOR_HZ, cpu: int | None = None, audio: bool = False) -> None:
        profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
        self.actions = load_backend("builtin").action_set()
        self.task: Task = load_task(TASKS_DIR / f"{task_id}.yaml", profile.flags)
        self.flag_bits = {name: i for i, name in enumerate(profile.flags)}
        self.dense_reward = dense_reward
        self.reward_spec = RewardSpec.for_task(self.task, profile.flags, dense_reward)
        self.step_budget = step_budget or self.task.step_budget
        self.render_mode = render_mode
        self.world = BuiltinWorld.launch(width=width, height=height, renderer="software",
                                         audio="on" if audio else "off")
        self.evaluator = EvaluatorClient.launch(self.world.pid, hz=evaluator_hz)
        self.evaluator.wait_locked()
        if cpu is not None:
            # Its world and evaluator; make_vector_env pins the environment's own subprocess. Never this process
            # here: AsyncVectorEnv builds one environment in the caller's process to read its spaces.
            # After the evaluator found the state block, so that first scan still used every core.
            pin_to_cpu(cpu, [self.world.pid, self.evaluator.pid])
        self.protocol = StepProtocol(self.world, self.evaluator)
        image = gym.spaces.Box(0, 255, (height, width, 3), np.uint8)
        self.audio_format = self.world.audio_info if audio else None
        self.audio_frames = 0
        if self.audio_format is not None:
            fmt = self.audio_format
            longest = max(sum(seconds for _, seconds in self.actions.discrete(name).macro)
                          for name in self.actions.names)
            ticks = int(np.ceil(longest * self.world.info.tick_hz - 1e-9)) + 1  # a hold may end one tick late
            self.audio_frames = ticks * fmt.samples_per_tick
            self.observation_space: gym.Space[Any] = gym.spaces.Dict({
                "image": image, "audio": gym.spaces.Box(-32768, 32767, (self.audio_frames, fmt.channels), np.int16)})
        else:
            self.observation_space = image
        self._tick = 0
        self.action_space = gym.spaces.Discrete(len(self.actions.names))
        self._steps = 0
        self._last = Reading(0.0, 0.0, 0)

    def _observe(self, sound: np.ndarray | None = None) -> Observation:
        pixels = self.world.latest_frame().pixels
        if self.audio_format is None:
            return pixels
        padded = np.zeros((self.audio_frames, self.audio_format.channels), np.int16)
        if sound is not None:
            padded[:min(len(sound), self.audio_frames)] = sound[:self.audio_frames]
        return {"image": pixels, "audio": padded}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        self._tick = self.world.reset(self.task.start_for_reset()).tick
        self._steps = 0
        self._last = _reading(self.protocol.start(self.task.success.model_dump(exclude_none=True)))
        return self._observe(), {"step": 0, **({"audio_frames": 0} if self.audio_format else {})}

    def step(self, action: int | np.integer[Any]) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an integer in [0, {len(self.actions.names)}), got {action!r}")
        chosen = self.actions.discrete(self.actions.names[int(action)])
        self._steps += 1
        answer = None
        for pad, seconds in chosen.macro:
            answer = self.world.hold(pad, seconds)
        sample = self.protocol.end(answer)  # the runner's step protocol: the sample is keyed by the game's tick
        success = self.protocol.judge(sample, self._steps, "agent")
        after = _reading(sample)
        reward = step_reward(self.reward_spec, self._last, after, success)
        self._last = after
        truncated = not success and self._steps >= self.step_budget
        info: dict[str, Any] = {"step": self._steps, "action": chosen.name}
        sound = None
        if self.audio_format is not None and answer is not None:
            sound = self.world.audio_ticks(self._tick + 1, answer.tick).samples  # the ticks this step played
            info["audio_frames"] = min(len(sound), self.audio_frames)
        self._tick = answer.tick if answer is not None else self._tick
        return self._observe(sound), float(reward), success, truncated, info

    def render(self) -> np.ndarray | None:
        return self.world.latest_frame().pixels if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        self.evaluator.close()
        self.world.close()


def _reading(sample: StateSample) -> Reading:
    return Reading(sample.x, sample.y, sample.flags)


if "PokeGym/Harborvale-v0" not in gym.registry:
    gym.register(id="PokeGym/Harborvale-v0", entry_point="core.session.gym_env:PokeGymEnv")  # pyright: ignore[reportUnknownMemberType]  # gymnasium: kwargs is an unparameterised dict
