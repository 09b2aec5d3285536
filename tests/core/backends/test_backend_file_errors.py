"""A backend file that does not validate says, through the real command line, the key and line of each mistake and
what is allowed there: the values of a choice, the keys of a mapping (and the nearest one, for a typo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.paths import PROJECT_ROOT
from tests.fake_games.backends import fake_backend


def _world(backend: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", "world", "--backend", str(backend)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=60)


def _broken(folder: Path, old: str, new: str) -> Path:
    fake_backend(folder)
    path = folder / "fake.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def _line(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_misspelt_key_is_named_with_its_line_the_keys_allowed_there_and_the_nearest(tmp_path):
    path = _broken(tmp_path, "    stop_grace_s: 2", "    stop_grace: 2")
    done = _world(path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:{_line(path, 'stop_grace:')}: external.launch.stop_grace: unknown key; external.launch takes " \
           "executable, search_paths, args, working_dir, env, files, version, input_config, ready, stop_grace_s " \
           "(did you mean 'stop_grace_s'?)" in done.stderr, done.stderr


def test_a_value_outside_a_choice_is_named_with_the_values_allowed(tmp_path):
    path = _broken(tmp_path, "xvfb: never", "xvfb: sometimes")
    done = _world(path)
    assert done.returncode == 2
    assert f"{path}:{_line(path, 'xvfb:')}: external.display.xvfb: Input should be 'auto', 'always' or 'never'" \
        in done.stderr, done.stderr


def test_a_misspelt_key_in_a_start_state_macro_is_found_through_the_list(tmp_path):
    path = _broken(tmp_path, "    start: {}", "    start: {macro: [{keys: F2}]}")
    done = _world(path)
    assert done.returncode == 2
    assert "external.start_states.start.macro.0.keys: unknown key; external.start_states.start.macro.0 takes pad, " \
           "seconds, turn_degrees, key, chat, wait_s (did you mean 'key'?)" in done.stderr, done.stderr
