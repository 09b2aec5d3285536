"""`python main.py report RUN --html FILE`: one self-contained page (no script, nothing fetched, images inlined)
with every table, the scatter, the taxonomy, per-task results and a strip of each failed episode's deadlock span;
a model's thought that holds HTML stays text. Opened in headless Chromium from Debian."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

import main
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.game.builtin import BuiltinWorld
from core.labels.model import AnnotatorLabels, DeadlockLabel
from core.labels.store import save_labels
from core.paths import TASKS_DIR
from core.session.batch import run_batch
from core.session.runner import RunOptions
from tests.export_episodes import STUCK_REPLIES, record

HOSTILE = '<script>alert(\\"pwned\\")</script><img src=x onerror=alert(1)> I am stuck & lost'


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, builtin_profile):
    """A replayed agent that walks into the park fence, says so with HTML in its thoughts, on two granularities;
    one of its episodes carries a person's label."""
    root = tmp_path_factory.mktemp("html")
    replies = [r.replace("I have not moved for several steps.", HOSTILE) for r in STUCK_REPLIES]
    source = root / "source.h5"
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        record(world, evaluator, actions, task, replies, source, RunOptions(step_budget=18))
    out = root / "run"
    for granularity in ("goal", "step"):
        run_batch("q02_badge_interaction", granularity, f"replay:{source}", 1, 1, out, RunOptions(step_budget=18),
                  lambda *_: None)
    (out / "errors.jsonl").write_text(json.dumps({  # an episode whose game died: not a result
        "key": "q08_site_navigation__goal_only__random__t0", "agent_spec": "random", "task_id": "q08_site_navigation",
        "granularity": "goal_only", "category": "navigation", "end_reason": "error",
        "error": "the game failed: <b>exit code -9</b>"}) + "\n")
    labelled = next((out / "episodes").glob("*goal_only*.h5"))
    save_labels(labelled, AnnotatorLabels("alice", spans=(DeadlockLabel(9, 14, kind="unaware"),),
                                          failure_category="Unaware Deadlock", category_confirmed=True))
    return out


@pytest.fixture(scope="module")
def page(run_folder, tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "report.html"
    assert main.main(["report", str(run_folder), "--html", str(path)]) == 0
    return path


def test_the_page_is_self_contained_and_has_every_part(page):
    html = page.read_text(encoding="utf-8")
    for heading in ("Success rate (the paper's layout)", "Success rate by granularity and category", "Movement metrics",
                    "Ineffective moves versus success", "Failure taxonomy", "Per-task results", "Failed episodes (2)"):
        assert re.search(f'<h2 id="[a-z-]+">{re.escape(heading)}</h2>', html)
    assert "<script" not in html and "onerror=" not in html.replace("onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in html  # the thought, as text
    assert not re.search(r'src="(?!data:)', html)  # nothing fetched from anywhere
    assert set(re.findall(r'href="([^"]*)"', html)) <= {f"#{name}" for name in re.findall(r'<h2 id="([^"]+)"', html)}
    images = re.findall(r'src="data:(image/(?:png|jpeg));base64,([^"]+)"', html)
    assert len(images) >= 1 + 2 * 3  # the scatter and at least three thumbnails per failed episode
    for mime, payload in images:
        with Image.open(io.BytesIO(base64.b64decode(payload))) as image:
            assert image.format == mime.split("/")[1].upper() and image.width >= 160
    assert "Steps 9–14, labelled by alice (unaware)" in html
    assert '<h2 id="errors">Infrastructure errors (not results)</h2>' in html and '<a href="#errors">1 episode' in html
    assert "the game failed: &lt;b&gt;exit code -9&lt;/b&gt;" in html
    assert "suggested by the metrics (aware)" in html  # the other episode's own span


def test_it_opens_in_headless_chromium(page, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    # parsed, and the thought's tag is text
    assert '<h2 id="failed">Failed episodes (2)</h2>' in dom and "<script" not in dom
    assert dom.count("<img") == page.read_text(encoding="utf-8").count("<img")
    shot = tmp_path / "page.png"
    # Tall enough for the taxonomy below the movement table, however long the folder's path makes its rows
    # (under pytest-xdist the paths are longer, and the chart had fallen below a 2000-pixel shot).
    subprocess.run([*flags, "--window-size=1280,3600", "--run-all-compositor-stages-before-draw",
                    "--virtual-time-budget=10000", f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=120, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.std() > 20  # a rendered page, not a blank one
    taxonomy_orange = (np.abs(pixels - (0xE0, 0x8A, 0x00)).max(axis=2) < 12).sum()  # the Aware Deadlock bar
    assert taxonomy_orange > 500
