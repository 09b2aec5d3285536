"""Minetest 5.6.1, a real third-party 3D game, driven under our own Xvfb through the same harness.

One game (and its evaluator) serves the whole module; tests that need a start state restart it, as a
run does. Ground truth comes from a TEST-ONLY world mod (tests/data/minetest_truth) that writes the
server's view of the player to a file; agents and the evaluator never see it: the evaluator reads the
client's memory through assets/profiles/minetest.yaml.

Tolerances (Minetest runs in real time and is not deterministic):
* at rest (both the log and the evaluator unchanged for 0.3 s), the positions agree within 0.05 node;
* while moving, the server's logged position and the client copy the evaluator reads are each a few
  frames behind the client's own (the server gets positions about every 0.1 s, the log adds 0.1 s), so
  every logged point must lie within 0.25 node of where the evaluator saw the player between 0.6 s
  before and 0.3 s after the log was read.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.agents.base import RandomAgent, ReplayAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.backends.session import BackendSession
from core.evaluation.driver import ScriptedDriver
from core.evaluation.tasks import load_suite, load_task, suite_folder
from core.game.connection import Capability
from core.game.pad import PadState
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions
from tests.conftest import assert_no_threads_left
from tests.minetest_support import assert_follows_the_log, minetest_missing, require_minetest_in_ci, truth_mod

AT_REST_NODES = 0.05

require_minetest_in_ci()
pytestmark = [pytest.mark.skipif(minetest_missing(), reason="minetest and Xvfb are not installed (.ci/run does it)"),
              pytest.mark.threads_owned_by_shared_session]  # prepare() may restart the game: see the session fixture


class Truth:
    """The test-only mod's log: the server's player position (nodes), look yaw and pitch (radians)."""

    def __init__(self, session: BackendSession) -> None:
        self.session = session

    def read(self) -> tuple[float, float, float, float]:
        path = Path(self.session.game.runtime_dir) / "world" / "pokegym_truth.txt"
        x, y, z, yaw, _pitch, _clock = (float(v) for v in path.read_text().split())
        return x, z, y, math.degrees(yaw)  # as a sample: ground plane (x, y), height z

    def settled(self) -> tuple[float, float, float, float]:
        """The log once it has stopped changing (the server trails the client by a few frames)."""
        return self.settled_with(None)[0]

    def settled_with(self, evaluator: object) -> tuple[tuple[float, float, float, float], object]:
        """The log and (if given) the evaluator's latest sample, once neither has changed for 0.3 s."""

        def now() -> tuple[object, object]:
            sample = evaluator.sample_after(time.time()) if evaluator is not None else None
            return self.read(), (sample.x, sample.y, sample.z) if sample is not None else None

        last, deadline = now(), time.monotonic() + 8
        while time.monotonic() < deadline:
            time.sleep(0.3)
            current = now()
            if current == last:
                break
            last = current
        sample = evaluator.sample_after(time.time()) if evaluator is not None else None
        return self.read(), sample


@pytest.fixture(scope="module")
def session() -> Iterator[BackendSession]:
    before = {t.ident for t in threading.enumerate()}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DISPLAY", raising=False)  # our own Xvfb, even on a desktop
        backend = load_backend("minetest")
        with BackendSession.open(backend, extra_files=[truth_mod()]) as opened:
            yield opened
    assert_no_threads_left(before)  # the threads tests saw it start (restarts: evaluator, stderr pump) ended with it


@pytest.fixture(scope="module")
def truth(session) -> Truth:
    return Truth(session)


@pytest.fixture(scope="module")
def tasks(session):
    return {t.id: t for t in load_suite(suite_folder("minetest"), [], session.backend.start_states)}


def _best_shift(moved: np.ndarray, still: np.ndarray, most: int = 160) -> tuple[int, float]:
    """The horizontal shift (px) that best lines `moved` up with `still`, and the mean difference left there: a
    turn that lost motion leaves a shift; a picture that changed otherwise (terrain drawn late) leaves none."""
    width = still.shape[1]
    tried = [(shift, float(np.abs(moved[:, max(0, shift):width + min(0, shift)].astype(int)
                                  - still[:, max(0, -shift):width - max(0, shift)].astype(int)).mean()))
             for shift in range(-most, most + 1, 4)]
    return min(tried, key=lambda pair: pair[1])


def test_frames_are_captured_and_change_when_the_camera_turns(session, tmp_path):
    game = session.game
    ahead = game.latest_frame()
    assert ahead.pixels.shape == (360, 640, 3) and ahead.pixels.std() > 10  # a drawn world, not a blank window
    game.turn_camera(90)
    right = game.latest_frame()
    game.turn_camera(-90)
    back = game.latest_frame()
    difference = np.abs(right.pixels.astype(int) - ahead.pixels.astype(int)).mean()
    returned = np.abs(back.pixels.astype(int) - ahead.pixels.astype(int)).mean()
    assert right.frame_no > ahead.frame_no and back.frame_no > right.frame_no
    if not (difference > 10 and returned < difference / 5):
        import cv2

        for name, frame in (("ahead", ahead), ("right", right), ("back", back)):
            cv2.imwrite(str(tmp_path / f"{name}.png"), frame.pixels[:, :, ::-1])
        pytest.fail(f"turned 90 degrees the picture changed by {difference:.1f}, turned back it still differs by "
                    f"{returned:.1f}; best horizontal shift back to the start {_best_shift(back.pixels, ahead.pixels)}"
                    f" (px, difference left); frames in {tmp_path}")


def test_walking_forward_with_the_mapped_pad_moves_the_player(session, truth):
    x0, y0, _, yaw = truth.settled()
    session.game.hold(PadState(left_y=1.0), 1.0)
    x1, y1, _, _ = truth.settled()
    # Facing `yaw` (counter-clockwise from +y), forward is (-sin, cos); Minetest walks 4 nodes/s.
    forward = (x1 - x0) * -math.sin(math.radians(yaw)) + (y1 - y0) * math.cos(math.radians(yaw))
    sideways = (x1 - x0) * math.cos(math.radians(yaw)) + (y1 - y0) * math.sin(math.radians(yaw))
    assert 3.0 <= forward <= 4.8 and abs(sideways) < 0.3, (forward, sideways)


def test_footsteps_are_heard_while_the_player_walks_and_not_while_it_stands(session, truth):
    """The game's own sound, played into our private sound server and captured by ticks: walking (the log
    shows the player moving) sounds, standing (the log shows it still) is quiet."""
    game = session.game
    assert Capability.AUDIO in game.info.capabilities and game.info.audio.rate == 48000
    # Whatever sounded before fades (the walk of the test before: on a loaded machine its tail was still in
    # the standing window after 1 s).
    game.hold(PadState(), 2.0)
    start = truth.settled()
    stood = game.hold(PadState(), 1.5)
    walked = game.hold(PadState(left_y=1.0), 2.0)
    moved = truth.settled()
    rested = game.hold(PadState(), 1.5)
    still = truth.settled()
    assert math.dist(start[:2], moved[:2]) > 5.0 and math.dist(moved[:2], still[:2]) < 0.05  # by the log

    def rms(first: int, last: int) -> float:
        return float(np.sqrt(np.mean(game.audio_ticks(first, last).samples.astype(float) ** 2)))

    standing = rms(stood.tick - 30, stood.tick)
    walking = rms(walked.tick - 45, walked.tick)  # the last 1.5 s of the walk
    resting = rms(rested.tick - 30, rested.tick)  # after the last step's sound has faded
    assert walking > 50 and walking > 10 * max(standing, resting, 1.0), (standing, walking, resting)
    # Our sound server maps no shared pools into the game: memory scans read only the game's own memory.
    assert "memfd:pulseaudio" not in Path(f"/proc/{game.pid}/maps").read_text()


def test_the_evaluator_tracks_the_position_within_tolerance(session, truth):
    evaluator = session.evaluator
    log: list[tuple[float, tuple[float, float, float, float]]] = []
    stop = threading.Event()

    def follow() -> None:
        while not stop.wait(0.05):
            log.append((time.time(), truth.read()))

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    cursor = len(evaluator.samples)
    try:
        for pad, seconds in [(PadState(left_y=1.0), 1.0), (PadState(right_x=1.0), 0.5), (PadState(left_x=-1.0), 0.8),
                             (PadState(left_y=-1.0, right_x=-0.5), 0.8)]:
            session.game.hold(pad, seconds)
            (x, y, z, yaw), sample = truth.settled_with(evaluator)
            assert math.dist((sample.x, sample.y, sample.z), (x, y, z)) <= AT_REST_NODES, (sample, (x, y, z))
            assert abs((sample.camera_yaw - yaw + 180) % 360 - 180) < 0.1
    finally:
        stop.set()
        follower.join()
    samples, _, _ = evaluator.samples.since(cursor)
    assert_follows_the_log(log, samples)


def test_a_reach_task_succeeds_along_its_reference_route(session, tasks):
    task = tasks["mt01_lakeshore_navigation"]
    session.prepare(task.start_for_reset())
    driver = ScriptedDriver(session.game, session.evaluator, steering="turn",
                            arrive=session.backend.validation.arrive_m, settle_s=session.backend.step_settle_s)
    result = driver.drive(task)
    assert result.success, result.message
    assert result.success_step is not None and result.success_step <= task.step_budget


def test_the_same_task_fails_when_the_agent_stands_still(session, tasks):
    task = tasks["mt01_lakeshore_navigation"]
    session.prepare(task.start_for_reset())
    still = ReplayAgent(session.actions, ['{"action": "Wait", "thought": "I will stay here"}'] * 4)
    result = EpisodeRunner(session.game, session.evaluator, still, session.actions, task,
                           RunOptions(step_budget=4, settle_s=session.backend.step_settle_s), None).run()
    assert not result.success and result.end_reason == "budget" and result.steps_used == 4
    assert not result.reached_goal_area


def test_a_random_agent_episode_is_recorded_and_opens_in_replay(session, tasks, tmp_path, qtbot):
    task = tasks["mt02_pine_grove_navigation"]
    session.prepare(task.start_for_reset())
    path = tmp_path / "minetest_random.h5"
    options = RunOptions(step_budget=5, settle_s=session.backend.step_settle_s,
                         observation=ObservationOptions(previous_frame=True, side_views=True, side_view_mode="turn"))
    result = EpisodeRunner(session.game, session.evaluator, RandomAgent(session.actions, seed=4), session.actions,
                           task, options, path).run()
    assert result.steps_used == 5 and result.error is None and result.game == "minetest"
    assert result.side_views == "turn"
    with EpisodeReader(path) as episode:
        assert episode.metadata["game"] == "minetest" and episode.step_count == 5
        records = list(episode.records())
        assert all(r["side_views"]["mode"] == "turn" and r["side_views"]["game_seconds"] > 0.5 for r in records)
        left = episode.image("left", 0)
        current = episode.image("current", 0)
        assert left.shape == current.shape == (360, 640, 3)
        assert np.abs(left.astype(int) - current.astype(int)).mean() > 5  # the left view looks elsewhere
        assert len(episode.samples()["x"]) > 10
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    window = MainWindow(LiveSession())
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    try:
        with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
            window.open_path(str(path))
        qtbot.waitUntil(lambda: window.replay.shown_index == 0, timeout=10_000)
        assert window.replay.timeline.count == 5
        shown = window.replay.frame_view.current
        assert shown is not None and shown.shape[:2] == (360, 640)
    finally:
        window.close()


def test_the_studio_drives_minetest_chosen_in_its_game_menu(qtbot, tmp_path, monkeypatch):
    """Game menu -> Minetest: frames in the Live view, capture rate and input device in the status bar, and
    Take control and an intervention reach the game through the same PadState path as the agent's actions."""
    from studio import live_session
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    monkeypatch.delenv("DISPLAY", raising=False)  # the studio starts Minetest in our own Xvfb
    monkeypatch.setattr(live_session, "RECORDINGS_DIR", tmp_path)
    window = MainWindow(LiveSession())  # not connected: nothing starts until a game is chosen
    errors: list[str] = []
    window.live.session.sig_error.connect(errors.append)
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    live = window.live
    try:
        window.choose_backend("minetest")
        assert live.controls.task.currentText().startswith("mt0") and not live.controls.clock.isEnabled()
        assert live.controls.clock.currentText().startswith("Real time")  # what the game runs in, not "Lockstep"
        starts = [live.authoring.form.start.itemText(i) for i in range(live.authoring.form.start.count())]
        assert starts == ["spawn", "spawn_east"]  # Minetest's own start states, not the built-in world's plaza
        qtbot.waitUntil(lambda: "Connected" in live.status.full_text() or "Error" in live.status.full_text(),
                        timeout=120_000)
        assert "Connected" in live.status.full_text(), errors
        # The map names Minetest's units (its profile's), not the built-in world's metres.
        assert live.trajectory.getAxis("bottom").labelText == "x (nodes)"
        assert live.authoring.form.radius.suffix() == " nodes"  # and so does a goal's radius
        qtbot.waitUntil(lambda: live.frame_view.current is not None, timeout=10_000)
        assert live.frame_view.current.shape[:2] == (360, 640)
        qtbot.waitUntil(lambda: "capture" in live.source.full_text(), timeout=5_000)
        assert "frames/s" in live.source.full_text() and "XTEST" in live.source.full_text()
        live.controls.task.setCurrentText("mt01_lakeshore_navigation")
        live.controls.budget.setValue(3)
        live.toggle_control()  # taken before Start: the human keeps control
        live.start()
        qtbot.waitUntil(lambda: live.session.taken_over, timeout=120_000)  # after the restart into the start
        live.session.human_input(PadState(left_y=1.0), 0.5)
        qtbot.waitUntil(lambda: live.session.runner.step >= 1, timeout=30_000)
        live.push_back()
        live.session.human_input(PadState(), 0.2)  # the intervention is carried by the next step
        qtbot.waitUntil(lambda: live.session.runner.step >= 2, timeout=30_000)
        live.session.stop()
        qtbot.waitUntil(lambda: not live.session.busy, timeout=30_000)
        recording = next(tmp_path.glob("*mt01_lakeshore_navigation*.h5"))
        with EpisodeReader(recording) as episode:
            records = episode.records()
            assert records[0]["source"] == "human" and records[0]["macro"][0][0]["left_y"] == 1.0
            # The walk as the runner judged it (the push that follows is kept apart, as intervention displacement).
            assert math.dist(records[0]["position_before"], records[0]["position_after"]) > 0.5
            assert any(r["intervention"] and r["intervention"]["kind"] == "push_back" for r in records)
            assert episode.metadata["game"] == "minetest" and episode.metadata["position_units"] == "nodes"
    finally:
        window.close()


def test_tasks_validate_drives_a_minetest_task_within_its_tolerances():
    import subprocess
    import sys

    from core.paths import PROJECT_ROOT, TASKS_DIR

    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    path = TASKS_DIR / "minetest" / "mt01_lakeshore_navigation.yaml"
    done = subprocess.run([sys.executable, "main.py", "tasks", "validate", str(path), "--drive"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = load_task(path, [], ["spawn", "spawn_east"]).reference_steps
    allowed = max(1, round(reference * load_backend("minetest").validation.steps_tolerance))
    assert "SOLVED  mt01_lakeshore_navigation" in done.stdout and f"(reference {reference} ± {allowed})" in done.stdout
