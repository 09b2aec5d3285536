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


CONTRACTS = ("Layers: studio above widgets above core", "core never imports Qt or the GUI packages",
             "Agents cannot reach ground truth (code-level isolation)", "Layers inside core",
             "Only the world process imports core.world", "The world imports nothing of the harness",
             "No import circles inside core")


def test_import_layers_hold():
    """The import-linter contracts in pyproject.toml, every one of them checked and kept."""
    beside_python = Path(sys.executable).parent / "lint-imports"
    executable = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    assert executable, "lint-imports is missing: install the dev extra (pip install -e '.[dev]')"
    result = _run(executable, "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in result.stdout, f"contract {name!r} not checked or not kept:\n{result.stdout}"
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_the_harness_side_of_main_never_loads_the_world():
    """main.py picks its commands by name (importlib), which import-linter cannot follow: check it at run time."""
    probe = ("import sys, main; main.build_parser(); "
             "loaded = sorted(m for m in sys.modules if m == 'core.world' or m.startswith('core.world.')); "
             "print(loaded); sys.exit(1 if loaded else 0)")
    result = _run(sys.executable, "-c", probe)
    assert result.returncode == 0, result.stdout + result.stderr


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
