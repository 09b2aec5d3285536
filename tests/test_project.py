"""Project rules that CI enforces: the command line, import layers and lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from core.paths import PROJECT_ROOT


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)


def test_main_help_lists_the_commands():
    result = _run(sys.executable, "main.py", "--help")
    assert result.returncode == 0
    for command in ("world", "bench", "demo"):
        assert command in result.stdout


def test_import_layers_hold():
    """core never imports Qt, widgets or studio; widgets never imports studio; only the world imports core.world."""
    beside_python = Path(sys.executable).parent / "lint-imports"
    executable = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    assert executable, "lint-imports is missing: install the dev extra (pip install -e '.[dev]')"
    result = _run(executable, "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


def test_ruff_is_clean():
    result = _run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_studio_without_a_display_says_what_to_do_instead_of_aborting():
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "main.py"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 2
    assert "no display" in result.stderr and "QT_QPA_PLATFORM=offscreen" in result.stderr
