"""The scripted driver: proves a task solvable by following its reference route.

PRIVILEGED. It steers with ground-truth samples from the evaluator, so it is a validation tool,
never an agent; anything it records must be marked privileged. Each pad action it takes counts
as one agent step, so the steps it needs are the task's reference path length.

It works in the game's own units (the profile's, after its scale) and at the game's own speed: each
walk is timed to cover the distance left at the walking speed (measured at the start where the driver
measures the camera, else given, else WALK_MPS), and a waypoint counts as reached within `arrive`, but
never less than the distance walked in ARRIVE_S (a game walking 340 units a second arrives within 51
units, the built-in world at 4 m/s within 0.6 m). Standing still likewise means moving less than the
distance walked in STUCK_S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.evaluation.client import EvaluatorClient
from core.evaluation.stepping import StepProtocol
from core.evaluation.tasks import Goto, Interact, Task
from core.game.connection import GameConnection, StepResult
from core.game.pad import Button, PadState

ARRIVE_M = 0.6
WALK_MPS = 4.0
STEP_S = 0.5
STUCK_STEPS = 4
ARRIVE_S = 0.15      # the least arrival tolerance: what the walking speed covers in this long
STUCK_S = 0.0125     # a step that moves less than the walking speed covers in this long moved nothing
CALIBRATION_S = 0.2
CALIBRATION_TURN_DEG = 45.0
TURN_GAIN_RANGE = (0.2, 5.0)   # a measured turn outside this times the asked one is no turn at all
TURN_TOLERANCE_DEG = 8.0
NO_PROGRESS_STEPS = 12   # steps in a row that bring a waypoint no closer: the route cannot be followed


@dataclass
class DriveResult:
    task_id: str
    success: bool
    steps: int
    success_step: int | None
    message: str = ""
    positions: list[tuple[float, float]] = field(default_factory=list[tuple[float, float]])
    privileged: bool = True
    blocked: bool = False  # the route could not be followed (as opposed to: followed, but success not met)
    met_at_start: bool = False  # the success condition held before any step: the task asks for nothing


class RouteBlocked(RuntimeError):
    pass


class TaskAlreadyMet(RuntimeError):
    """The task's success condition holds at its start: it asks for nothing."""


class ScriptedDriver:
    """steering="stick" moves with the analogue stick relative to the camera (the built-in world);
    steering="turn" turns the camera toward the waypoint, then walks forward (keyboard games, whose
    stick is only eight keys). `settle_s` lets a real-time game's state catch up before each reading.

    `reads_camera` / `reads_dialogue`: whether the evaluator's profile has camera_yaw and
    dialogue_active fields. A profile made by the memory finder may hold the position only: then
    the camera's heading is measured by walking forward a moment after each reset and kept up to date
    by the turns the driver makes itself, and an interaction presses A as often as the task says.
    Steering by turns with no camera field, the turn itself is measured too (walk, turn, walk again): a
    backend's mouse scale may be off (Red Eclipse turned half the degrees asked), and a game's ground may
    be mirrored against the driver's convention (Red Eclipse's x, y with z up turn the other way)."""

    def __init__(self, game: GameConnection, evaluator: EvaluatorClient, steering: str = "stick",
                 arrive: float = ARRIVE_M, settle_s: float = 0.0, reads_camera: bool = True,
                 reads_dialogue: bool = True, walk_speed: float | None = None) -> None:
        self.game = game
        self.evaluator = evaluator
        self.steering = steering
        self.arrive = arrive
        self.walk_speed = walk_speed or WALK_MPS  # units per second, measured by measure_camera where it runs
        self.settle_s = settle_s
        self.reads_camera = reads_camera
        self.reads_dialogue = reads_dialogue
        self.steps = 0
        self.positions: list[tuple[float, float]] = []
        self._measured_yaw = 0.0
        self._turn_gain = 1.0  # degrees the camera turns per degree asked (negative: mirrored)
        self.protocol = StepProtocol(game, evaluator, settle_s)  # the runner's step protocol
        self._answer: StepResult | None = None  # the game's answer to the last input (its tick keys the sample)
        self._judged_step = 0  # the last step whose end the evaluator judged
        self.succeeded = False

    def _now(self) -> tuple[float, float, float, bool]:
        """Where the character is now; the end of a step not judged yet is judged on this reading."""
        sample = self.protocol.end(self._answer)
        if self.steps > self._judged_step:
            self._judged_step = self.steps
            self.succeeded = self.protocol.judge(sample, self.steps, "privileged") or self.succeeded
        yaw = sample.camera_yaw if self.reads_camera else self._measured_yaw
        return sample.x, sample.y, yaw, sample.dialogue_active

    def measure_camera(self) -> None:
        """Walk forward along the camera a moment and back: the heading of that step is the camera's. Steering
        by turns, then turn by CALIBRATION_TURN_DEG and walk again: how far the heading moved is the turn's gain.
        Not counted as steps: it is the driver's calibration, not part of the route."""
        heading = self._walk_heading()
        self._measured_yaw = heading
        if self.steering != "turn":
            return
        self.game.turn_camera(CALIBRATION_TURN_DEG)
        self._answer = None
        turned = self._walk_heading()
        # Turning right lowers the yaw (counter-clockwise from +y)
        gain = -_wrap(turned - heading) / CALIBRATION_TURN_DEG
        low, high = TURN_GAIN_RANGE
        if not low <= abs(gain) <= high:
            raise RouteBlocked(f"turning the camera {CALIBRATION_TURN_DEG:g} degrees turned the walk by "
                               f"{-gain * CALIBRATION_TURN_DEG:.1f}: check the backend's mouse degrees_per_px (or "
                               "turn_degrees_per_s) and that the window has input focus")
        self._turn_gain = gain
        self._measured_yaw = turned

    def _walk_heading(self) -> float:
        """Forward a moment and back: the heading walked (yaw, counter-clockwise from +y); sets the walking speed."""
        # At rest: a game with momentum (Red Eclipse) still slides back from the last calibration walk, and
        # a walk forward begun then only cancels the slide.
        before = self.protocol.end(self._answer)
        after = self.protocol.end(self.game.hold(PadState(left_y=1.0), CALIBRATION_S))
        self._answer = self.game.hold(PadState(left_y=-1.0), CALIBRATION_S)
        dx, dy = after.x - before.x, after.y - before.y
        if math.hypot(dx, dy) < 1e-3:
            raise RouteBlocked("could not measure the camera's heading: walking forward did not move the "
                               "character (blocked at the start?)")
        self.walk_speed = math.hypot(dx, dy) / CALIBRATION_S
        return math.degrees(math.atan2(-dx, dy))

    def arrival(self, arrive: float | None = None) -> float:
        """Within this distance a waypoint counts as reached: `arrive` (default the driver's), but never less
        than what the walking speed covers in ARRIVE_S, or every waypoint of a fast game is overshot."""
        return max(self.arrive if arrive is None else arrive, self.walk_speed * ARRIVE_S)

    def _act(self, pad: PadState, seconds: float) -> None:
        self.steps += 1
        self._answer = self.game.hold(pad, seconds)
        if pad.buttons:
            self._answer = self.game.hold(PadState(), 1.0 / 30.0)  # release, so the next press counts

    def _stick_towards(self, x: float, y: float, tx: float, ty: float, camera_yaw: float,
                       magnitude: float = 1.0) -> PadState:
        heading = math.degrees(math.atan2(-(tx - x), ty - y))
        relative = math.radians(heading - camera_yaw)
        return PadState(left_x=-math.sin(relative) * magnitude, left_y=math.cos(relative) * magnitude)

    def goto(self, tx: float, ty: float, arrive: float | None = None) -> None:
        arrive = self.arrival(arrive)
        stuck = 0
        closest, since_closer = math.inf, 0
        while True:
            x, y, yaw, _ = self._now()
            self.positions.append((x, y))
            distance = math.hypot(tx - x, ty - y)
            if distance <= arrive or self.succeeded:
                return  # the task is met: walking on to the waypoint would only add steps after the success
            closest, since_closer = (distance, 0) if distance < closest - arrive / 2 else (closest, since_closer + 1)
            if since_closer >= NO_PROGRESS_STEPS:
                raise RouteBlocked(f"{NO_PROGRESS_STEPS} steps brought ({tx:.1f}, {ty:.1f}) no closer than "
                                   f"{closest:.1f} (now at ({x:.1f}, {y:.1f})): something is in the way, or the turns "
                                   "do not turn the way the backend says")
            seconds = min(STEP_S, max(distance / self.walk_speed, 1 / 30))
            if self.steering == "turn":
                heading = math.degrees(math.atan2(-(tx - x), ty - y))
                right = _wrap(yaw - heading)
                if abs(right) > TURN_TOLERANCE_DEG:
                    self.steps += 1
                    self.game.turn_camera(right / self._turn_gain)
                    self._answer = None  # no answer with a tick: the sample is keyed by the game's tick now
                    if not self.reads_camera:
                        # Turning right lowers the yaw (counter-clockwise from +y); with no camera field to
                        # read, the heading measured at the start is kept up to date by the turns made.
                        self._measured_yaw = yaw - right
                    continue
                self._act(PadState(left_y=1.0), seconds)
            else:
                self._act(self._stick_towards(x, y, tx, ty, yaw), seconds)
            nx, ny, _, _ = self._now()
            stuck = stuck + 1 if math.hypot(nx - x, ny - y) < self.walk_speed * STUCK_S else 0
            if stuck >= STUCK_STEPS:
                raise RouteBlocked(f"blocked at ({nx:.1f}, {ny:.1f}) heading for ({tx:.1f}, {ty:.1f})")

    def interact(self, spec: Interact) -> None:
        target = spec.interact.target
        if spec.interact.approach is not None:
            self.goto(*spec.interact.approach)
        x, y, yaw, _ = self._now()
        # A short nudge toward the target turns the character to face it.
        self._act(self._stick_towards(x, y, *target, yaw, magnitude=0.5), 0.2)
        for _ in range(spec.interact.presses):
            self._act(PadState(buttons=frozenset({Button.A})), 1.0 / 30.0)
            if self.reads_dialogue and not self._now()[3]:
                return
        if not self.reads_dialogue:
            return  # no way to see the dialogue close: the task's press count is all there is
        raise RouteBlocked(f"the dialogue at {target} did not close after {spec.interact.presses} presses")

    def drive(self, task: Task) -> DriveResult:
        self.game.reset(task.start_for_reset())
        self._answer = None
        self._judged_step, self.succeeded = self.steps, False
        message, blocked = "", False
        try:
            if not self.reads_camera:
                self.measure_camera()
            start = self.protocol.start(task.success.model_dump(exclude_none=True))
            if self.protocol.judge(start, 0, "privileged"):
                raise TaskAlreadyMet("the success condition already holds at the start state, before any step: "
                                     "the task asks for nothing (change its start state or its success condition)")
            for step in task.reference_route:
                if isinstance(step, Goto):
                    self.goto(*step.goto)
                else:
                    self.interact(step)
                if self.succeeded:
                    break
        except TaskAlreadyMet as exc:
            return DriveResult(task.id, False, 0, None, str(exc), self.positions, blocked=True, met_at_start=True)
        except RouteBlocked as exc:
            message, blocked = str(exc), True
        if self.steps > self._judged_step:  # the last step's end, so its success is in
            self._judged_step = self.steps
            sample = self.protocol.end(self._answer, settle=False)
            self.succeeded = self.protocol.judge(sample, self.steps, "privileged") or self.succeeded
        success = self.succeeded
        step = self.evaluator.successes[0]["step"] if success else None
        if not success and not message:
            message = "the route ended without meeting the success condition"
        return DriveResult(task.id, success, self.steps, step, message, self.positions, blocked=blocked)


def _wrap(degrees: float) -> float:
    """An angle in [-180, 180)."""
    return (degrees + 180.0) % 360.0 - 180.0
