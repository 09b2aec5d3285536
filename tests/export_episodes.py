"""Real episodes for the export tests: the built-in world, the evaluator and the episode runner, driven by
recorded replies, with human and intervention steps queued at chosen points the way the studio queues them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.agents.actions import ActionSet
from core.agents.base import ReplayAgent
from core.agents.observation import Observation
from core.episode import EpisodeResult
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import Task
from core.game.builtin import BuiltinWorld
from core.session.runner import EpisodeRunner, RunOptions

# A task authored outside the suite: two steps back from plaza_north (0, 9) reach the goal.
SHORT_TASK = """\
format_version: 1
id: t_short_walk
quest: t_short_walk
category: navigation
title: Step back toward the fountain
start_state: plaza_north
step_budget: 8
instructions:
  visual_guided: Walk backwards a few metres toward the fountain.
  step_guided: 1. Walk backwards.
  goal_only: Go toward the fountain.
success:
  reach:
    x: 0
    y: 5.5
    radius: 1.0
reference_route:
- goto: [0, 5.5]
reference_steps: 2
"""

STUCK_REPLIES = (  # q02 from park_gate: left along the path, then into the park fence
    ['{"thought": "The badge should be past the gate, to the <b>left</b> & on.", "self_assessment": "progressing", '
     '"action": "MoveLeft"}'] * 4
    + ['{"thought": "Keep going forward; the way looks open.", "self_assessment": "progressing", '
       '"action": "MoveForward"}'] * 8
    + ['{"thought": "I have not moved for several steps. I seem to be stuck against the fence, so I should turn '
       'around and look for the gate.", "self_assessment": "stuck", "action": "MoveForward"}'] * 6)


class HookedReplayAgent(ReplayAgent):
    """A replay agent that runs a hook before its n-th decision (1-based), e.g. to queue an intervention
    on the runner, which the runner then executes as the step after that decision's."""

    def __init__(self, actions: ActionSet, replies: list[str], hooks: dict[int, Callable[[], None]]) -> None:
        super().__init__(actions, replies)
        self.hooks, self.calls = hooks, 0

    def decide(self, observation: Observation):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls in self.hooks:
            self.hooks[self.calls]()
        return super().decide(observation)


def record(world: BuiltinWorld, evaluator: EvaluatorClient, actions: ActionSet, task: Task, replies: list[str],
           path: Path, options: RunOptions,
           hooks: Callable[[EpisodeRunner], dict[int, Callable[[], None]]] | None = None) -> EpisodeResult:
    agent = HookedReplayAgent(actions, replies, {})
    runner = EpisodeRunner(world, evaluator, agent, actions, task, options, path)
    if hooks is not None:
        agent.hooks = hooks(runner)
    return runner.run()
