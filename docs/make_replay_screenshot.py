"""Regenerate the README's Replay screenshot from a real recorded episode with labelled spans:
`QT_QPA_PLATFORM=offscreen python docs/make_replay_screenshot.py`."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QSettings

from core.agents.base import ReplayAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.game.builtin import BuiltinWorld
from core.paths import TASKS_DIR
from core.session.runner import EpisodeRunner, RunOptions
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "studio_replay.png"


def reply(action: str, said: str, thought: str) -> str:
    return json.dumps({"thought": thought, "self_assessment": said, "action": action})


# A scripted stand-in for a model (the README must not depend on an API key): it walks from the
# harbour into the sea wall, insists it is progressing (unaware), then notices but keeps pushing
# (aware), and finally turns away.
REPLIES = ([reply("MoveForward", "progressing", "The road ahead is clear; keep walking east.")] * 6
           + [reply("MoveForward", "progressing", "Walking on towards the building site.")] * 8
           + [reply("MoveForward", "stuck", "I have not moved for a while; something blocks me. Push on.")] * 6
           + [reply("RotateLeft", "unsure", "Blocked ahead; look for another way.")] * 3
           + [reply("MoveForward", "progressing", "A street opens to the north; follow it.")] * 12)


def record(folder: Path) -> Path:
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q08_site_mixed.yaml")
    path = folder / "demo_episode.h5"
    options = RunOptions(granularity="goal_only", step_budget=len(REPLIES),
                         observation=ObservationOptions(previous_frame=True, side_views=True), frame_every_ticks=10)
    with BuiltinWorld.launch() as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, ReplayAgent(actions, REPLIES, source="scripted demo"), actions, task,
                      options, path).run()
    return path


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        episode = record(Path(folder))
        app, window = open_studio(connect=False)
        QSettings("PokeGym", "Studio").setValue("replay/annotator", "alice")
        window.replay.set_annotator("alice")
        window.open_path(folder)  # the folder's episode list, beside the episode
        replay = window.replay
        spin_until(lambda: replay.episodes.rows == 1, 60)
        window.open_path(str(episode))
        spin_until(lambda: replay.episode is not None and replay.shown_index == 0, 60)
        editor = replay.labels.editor
        span = editor.spans[0]  # the suggestion: every ineffective move against the wall
        replay.labels.select(0)
        replay.labels.accept()
        replay.labels.split_at(15)  # the self-assessment turns to "stuck" at step 15
        replay.labels.set_kind("aware")
        replay.labels.select(0)
        replay.labels.set_kind("unaware")
        replay.labels.select(1)
        replay.labels.awareness_here(15)
        replay.labels.set_note("says 'stuck' from step 15 yet keeps pushing")
        replay.labels.set_category("Aware Deadlock")
        target = span.start + 9
        replay.seek_step(target)
        replay.timeline.zoom(1.5)
        spin_until(lambda: replay.shown_index == replay.cursor, 10)
        save_and_close(app, window, OUT, settle_s=1.5)  # autosave and repaint first


if __name__ == "__main__":
    main()
