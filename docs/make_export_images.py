"""Regenerate the README's export pictures from real recorded episodes: `python docs/make_export_images.py`.

It records a scripted agent walking into the park fence (with push-backs and continuous frames) and a random
agent, makes the HTML report and photographs it in headless Chromium (Debian's `chromium`), and writes a
short GIF clip of the deadlock with every overlay.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image

import main
from core.agents.base import ReplayAgent
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.tasks import load_task
from core.export.clip import ClipOptions, export_clip
from core.export.overlay import OverlayOptions
from core.game.builtin import BuiltinWorld
from core.labels.model import AnnotatorLabels, DeadlockLabel
from core.labels.store import save_labels
from core.paths import PROFILES_DIR, TASKS_DIR
from core.session.batch import run_batch
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions

IMAGES = Path(__file__).resolve().parent / "images"


def reply(action: str, said: str, thought: str) -> str:
    return json.dumps({"thought": thought, "self_assessment": said, "action": action})


# A scripted stand-in for a model (no API key needed): along the park path, then into the fence.
REPLIES = ([reply("MoveLeft", "progressing", "The badge was lost in the park; I follow the path past the gate.")] * 4
           + [reply("MoveForward", "progressing", "The lawn ahead looks open. Keep walking toward the trees.")] * 7
           + [reply("MoveForward", "stuck", "I have not moved for several steps: a fence blocks the way. "
                                             "I should turn and look for the gate.")] * 7)


def record_runs(root: Path) -> Path:
    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = load_backend("builtin").action_set()
    source = root / "scripted_agent.h5"
    task = load_task(TASKS_DIR / "q02_badge_interaction.yaml", profile.flags)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, ReplayAgent(actions, REPLIES), actions, task, RunOptions(step_budget=18),
                      source).run()
    run = root / "run"
    physical = RunOptions(step_budget=18, frame_every_ticks=3, interventions=InterventionPolicy("physical", 3))
    run_batch("q02_badge_interaction", "goal", f"replay:{source}", 1, 1, run, physical, lambda *_: None)
    run_batch("q02_badge_interaction", "step", f"replay:{source}", 1, 1, run, RunOptions(step_budget=18),
              lambda *_: None)
    run_batch("q08_site_navigation,q04_clock_interaction,q01_bread_navigation", "goal", "random:3", 2, 1, run,
              RunOptions(step_budget=20), lambda *_: None)
    labelled = next((run / "episodes").glob("q02_*step_guided*.h5"))
    save_labels(labelled, AnnotatorLabels("alice", spans=(DeadlockLabel(9, 18, kind="aware", awareness_step=12),),
                                          failure_category="Aware Deadlock", category_confirmed=True))
    return run


def report_picture(run: Path, work: Path) -> None:
    page = work / "report.html"
    assert main.main(["report", str(run), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    head, failed = html.split("<body>")[0], html.split('<h2 id="failed">')[1]
    (work / "failed.html").write_text(f'{head}<body><h2 id="failed">{failed}', encoding="utf-8")
    for name, source, height in (("export_report.png", page, 860), ("export_report_failed.png", work / "failed.html",
                                                                      560)):
        shot = work / name
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={work / 'chromium'}", f"--window-size=1200,{height}", f"--screenshot={shot}",
                        source.as_uri()], check=True, capture_output=True, timeout=120)
        Image.open(shot).convert("RGB").save(IMAGES / name, optimize=True)


def clip_gif(run: Path) -> None:
    episode = next((run / "episodes").glob("q02_*goal_only*.h5"))
    export_clip(episode, "8-14", IMAGES / "export_clip.gif", ClipOptions(OverlayOptions(width=480), speed=1.0))


def main_() -> None:
    if shutil.which("chromium") is None:
        sys.exit("install Debian's chromium first (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        run = record_runs(work)
        report_picture(run, work)
        clip_gif(run)
    for name in ("export_report.png", "export_report_failed.png", "export_clip.gif"):
        print(f"wrote {IMAGES / name} ({(IMAGES / name).stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main_()
