"""--attach: `run` and the studio drive a game that is already running, one episode at a time, and leave it
running. Shown on a built-in world started by hand (`python main.py world`), which is what the flag's
connection-file form attaches to; external games attach through the same BackendSession.attach_to."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.game.builtin import BuiltinWorld
from core.paths import PROJECT_ROOT


@pytest.fixture
def started_by_hand() -> Iterator[tuple[subprocess.Popen[str], Path]]:
    # `with` closes the stdout pipe and reaps the process once it is killed.
    with subprocess.Popen([sys.executable, "main.py", "world", "--renderer", "software"], cwd=PROJECT_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as process:
        try:
            assert process.stdout is not None
            connection_file = None
            for line in process.stdout:
                if line.startswith("Attach with: "):
                    connection_file = Path(line.removeprefix("Attach with: ").strip())
                    break
            assert connection_file is not None, "the world printed no connection file"
            yield process, connection_file
        finally:
            # Stopped as a user stops it (Ctrl+C), so it removes its folder in /dev/shm; SIGKILL left it there.
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
            if connection_file is not None:
                shutil.rmtree(connection_file.parent, ignore_errors=True)  # killed after all: nothing else will


def test_run_attaches_to_a_running_world_and_leaves_it_running(started_by_hand, tmp_path):
    process, connection_file = started_by_hand
    out = tmp_path / "run"
    command = [sys.executable, "main.py", "run", "--attach", str(connection_file), "--tasks",
               "q08_site_navigation,q04_clock_interaction", "--agent", "random", "--budget", "4", "--out", str(out)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == ["q04_clock_interaction", "q08_site_navigation"]
    assert all(r["steps_used"] == 4 and (out / r["episode"]).exists() for r in rows)
    assert process.poll() is None, "the run ended a world it did not start"
    with BuiltinWorld.attach(connection_file) as world:  # and it still serves the next client
        assert world.reset("plaza").tick == 0


@pytest.mark.parametrize("extra, message", [
    (["--workers", "2"], "one episode at a time: leave out --ray and --workers"),
    (["--backend", "builtin", "--attach"], "needs the connection file that `python main.py world` printed"),
])
def test_attach_mistakes_are_one_line_and_make_nothing(tmp_path, extra, message):
    out = tmp_path / "run"
    attach = [] if "--attach" in extra else ["--attach", str(tmp_path / "world.json")]
    command = [sys.executable, "main.py", "run", *attach, *extra, "--tasks", "q08_site_navigation",
               "--budget", "2", "--out", str(out)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_studio_attaches_to_a_running_world_and_leaves_it_running(started_by_hand, qtbot, tmp_path,
                                                                       monkeypatch):
    pytest.importorskip("pytestqt")
    from studio.game_host import GameHost
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    process, connection_file = started_by_hand
    monkeypatch.setattr("studio.live_session.RECORDINGS_DIR", tmp_path)
    session = LiveSession(GameHost(attach=str(connection_file)))
    window = MainWindow(session)
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: session.host.evaluator is not None, timeout=60_000)
        assert session.host.world is not None and session.host.world.pid == process.pid
        assert session.host.keeper.launched == [process.pid]  # the pid it drives; nothing was launched
    finally:
        window.close()
    assert process.poll() is None, "closing the studio ended a world it did not start"
