"""Project rules that CI enforces: the command line, import layers and lint."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tokenize
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


def _tool(name: str) -> str:
    """A dev-extra tool's executable: the one installed beside this Python, else one on PATH."""
    beside_python = Path(sys.executable).parent / name
    executable = str(beside_python) if beside_python.exists() else shutil.which(name)
    assert executable, f"{name} is missing: install the dev extra (pip install -e '.[dev]')"
    return executable


def test_import_layers_hold():
    """The import-linter contracts in pyproject.toml, every one of them checked and kept."""
    executable = _tool("lint-imports")
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


def test_pyright_is_clean():
    """pyright with pyproject.toml's configuration: strict for core, basic for studio, widgets and main.py, against
    this Python's packages (typings/ holds the stubs of the untyped libraries). Takes about a minute."""
    result = subprocess.run([_tool("pyright"), "--outputjson", "--pythonpath", sys.executable], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=900)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"pyright did not report (exit {result.returncode}):\n{result.stdout}{result.stderr}") \
            from None
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    shown = "\n".join(f"{Path(d['file']).relative_to(PROJECT_ROOT)}:{d['range']['start']['line'] + 1}: "
                      f"{d['message']} ({d.get('rule', '')})" for d in errors[:25])
    assert not errors, f"pyright found {len(errors)} error(s); the first:\n{shown}"
    assert report["summary"]["filesAnalyzed"] >= 250, f"pyright checked only {report['summary']} files"


CHECKED_SOURCES = ("core", "studio", "widgets", "main.py")
# A pyright: ignore names its rules and says why after it: `# pyright: ignore[reportX]  # why`.
IGNORE_WITH_REASON = re.compile(r"#\s*pyright:\s*ignore\[[A-Za-z, ]+\]\s+#\s*\S")


def _comments(path: Path) -> list[tuple[int, str]]:
    with tokenize.open(path) as handle:
        return [(token.start[0], token.string) for token in tokenize.generate_tokens(handle.readline)
                if token.type == tokenize.COMMENT]


def test_every_type_checker_exception_says_why():
    """No blanket ignores: each `# pyright: ignore[rule]` is followed by its reason on the same line, a file-level
    `# pyright: rule=false` has its reason on the comment line above, and `# type: ignore` is not used (pyright
    does not read it here: enableTypeIgnoreComments = false)."""
    problems = []
    for source in CHECKED_SOURCES:
        root = PROJECT_ROOT / source
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            comments = _comments(path)
            lines = dict(comments)
            where = path.relative_to(PROJECT_ROOT)
            for number, text in comments:
                if re.search(r"#\s*type:\s*ignore", text):
                    problems.append(f"{where}:{number}: type: ignore (write # pyright: ignore[rule]  # why)")
                elif re.search(r"#\s*pyright:\s*ignore", text) and not IGNORE_WITH_REASON.search(text):
                    problems.append(f"{where}:{number}: a pyright: ignore without its rules or its reason")
                elif (setting := re.match(r"#\s*pyright:\s*(\w+)", text)) and setting.group(1) != "ignore" \
                        and number - 1 not in lines:
                    problems.append(f"{where}:{number}: a file-level pyright setting without its reason above it")
    assert not problems, "\n".join(problems)
