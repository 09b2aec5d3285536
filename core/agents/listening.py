"""`--agent random+listen`: the random agent, except that it turns away when its last step sounded like a bump.

It reads only its observation's audio (the signal a player hears) through the same bump detector the tests
hold to the world's ground truth (core/audio/onsets.py), never any state of the game: the isolation contract
holds. Compared with plain random on the same tasks, seeds and budgets, it shows that sound reaches decisions.
"""

from __future__ import annotations

import json
import time
from typing import Any

from core.agents.actions import ActionSet
from core.agents.base import Decision, RandomAgent, decision_from_reply
from core.agents.observation import Observation
from core.audio.onsets import detect_bumps

TURNS = ("RotateLeft", "RotateRight")


class ListeningRandomAgent(RandomAgent):
    name = "random+listen"
    needs_audio = True  # the run must give it the sound of each step (as `--audio clip` does)

    def __init__(self, actions: ActionSet, seed: int = 0, paradigm: str = "discrete") -> None:
        super().__init__(actions, seed, paradigm)
        self.turns = [name for name in TURNS if name in actions.names]
        self.bumps_heard = 0

    def decide(self, observation: Observation) -> Decision:
        heard = observation.audio is not None and bool(detect_bumps(observation.audio.samples,
                                                                    observation.audio.rate))
        if not heard:
            return super().decide(observation)
        started = time.perf_counter()
        self.bumps_heard += 1
        action: Any
        if self.paradigm == "continuous":
            action = {"type": "continuous", "left_stick": [0.0, 0.0],
                      "right_stick": [self._rng.choice((-1.0, 1.0)), 0.0], "duration": 0.5}
        elif self.turns:
            action = self._rng.choice(self.turns)
        else:
            return super().decide(observation)
        reply = json.dumps({"thought": f"I heard a bump at step {observation.step - 1}: turning away",
                            "self_assessment": "stuck", "action": action})
        return decision_from_reply(reply, self.actions, self.paradigm, started)
