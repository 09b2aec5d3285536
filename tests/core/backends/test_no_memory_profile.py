"""`memory_profile: none`: a new game's backend works before the memory finder has made its profile. The game
starts, shows and takes input; whatever needs ground truth refuses, naming the finder's command."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from core.backends.profile import NoMemoryProfileError, load_backend
from core.backends.session import BackendSession
from core.game.pad import PadState
from core.paths import DEFAULT_WORLD, PROJECT_ROOT


def _write_backend(folder, memory_profile: str = "none"):
    path = folder / "new_game.yaml"
    path.write_text(textwrap.dedent(f"""\
        format_version: 1
        name: new_game
        title: A game nobody has mapped yet
        kind: builtin
        memory_profile: {memory_profile}
        builtin: {{world: {DEFAULT_WORLD}, renderer: software, mode: lockstep, audio: off}}
        """))
    return path


@pytest.mark.parametrize("spelling", ["none", "None", "null"])
def test_none_is_accepted_and_the_finder_command_is_named_where_a_profile_is_needed(tmp_path, spelling):
    backend = load_backend(_write_backend(tmp_path, spelling))
    assert not backend.has_memory_profile
    assert backend.action_set().names[0] == "MoveForward"  # it plays with the standard set meanwhile
    with pytest.raises(NoMemoryProfileError) as caught:
        _ = backend.memory_profile_path
    assert f"python main.py memory signature --backend {tmp_path / 'new_game.yaml'} --out" in str(caught.value)


def test_the_game_runs_and_takes_input_with_no_evaluator(tmp_path):
    with BackendSession.open(load_backend(_write_backend(tmp_path))) as session:
        assert not session.judged and session.evaluator is None and session.profile is None
        session.prepare("plaza")
        before = session.game.latest_frame().pixels.copy()
        session.game.hold(PadState(right_x=1.0), 0.5)
        after = session.game.latest_frame().pixels
        assert np.abs(after.astype(int) - before.astype(int)).mean() > 1  # the camera turned: the picture moved
        with pytest.raises(NoMemoryProfileError, match="memory signature"):
            session.ensure_evaluator()


def test_a_run_of_tasks_refuses_in_one_line_naming_the_finder(tmp_path):
    path = _write_backend(tmp_path)
    # Tasks need ground truth; without --tasks the same command plays unjudged (tests/core/cli/test_free_play.py)
    done = subprocess.run([sys.executable, "main.py", "run", "--backend", str(path), "--tasks", "all", "--agent",
                           "random", "--out", str(tmp_path / "run")], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no memory profile yet" in lines[0]
    assert f"python main.py memory signature --backend {path}" in lines[0]
