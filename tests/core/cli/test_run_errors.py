"""`python main.py run` and `report` on infrastructure errors and on mistakes in the command line.

An episode that ends in an infrastructure error (here: the model API refusing the key, through the
official OpenAI SDK and a loopback server that echoes the key back) is no result: it goes to errors.jsonl,
`report` counts it apart from every table, and running the same command again retries it. Mistakes give
one line and leave no empty output folder behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT
from tests.loopback import LoopbackProvider, Scripted, openai_body

KEY = "sk-test-SECRET-run-0123456789"
REPLY = openai_body('{"thought": "ahead", "self_assessment": "progressing", "action": "MoveForward"}')
TASKS = ["q08_site_navigation", "q04_clock_interaction"]
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    return {**env, **extra}


def _main(args: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "main.py", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env or _env())


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_an_infrastructure_error_is_counted_apart_and_retried_on_resume(tmp_path):
    out = tmp_path / "run"
    server = LoopbackProvider()
    command = ["run", "--tasks", ",".join(TASKS), "--granularity", "goal", "--agent", "model:openai:test-model",
               "--base-url", f"http://127.0.0.1:{server.port}/v1", "--budget", "2", "--out", str(out)]
    try:
        # The first episode gets its two replies; for the second the API refuses the key, echoing it.
        server.replies.extend([Scripted(200, REPLY)] * 2)
        server.replies.append(Scripted(401, {"error": {"message": f"Incorrect API key provided: {KEY}",
                                                       "type": "invalid_request_error"}}))
        first = _main(command, _env(OPENAI_API_KEY=KEY))
        assert first.returncode == 1, first.stderr  # not every episode produced a result
        assert "infrastructure error, not a result" in first.stdout and "errors.jsonl" in first.stderr
        results, errors = _rows(out / "results.jsonl"), _rows(out / "errors.jsonl")
        assert [r["task_id"] for r in results] == [TASKS[0]]
        assert [e["task_id"] for e in errors] == [TASKS[1]] and "401" in errors[0]["error"]
        for text in (first.stdout, first.stderr, (out / "errors.jsonl").read_text()):
            assert KEY not in text
        for episode in (out / "episodes").iterdir():
            assert KEY.encode() not in episode.read_bytes()

        report = _main(["report", str(out), "--json"])
        assert report.returncode == 0, report.stderr
        numbers = json.loads(report.stdout)
        assert numbers["episodes"] == 1  # the error is in no denominator
        assert [row["episodes"] for row in numbers["sr"]] == [1]
        assert [e["task_id"] for e in numbers["infrastructure_errors"]] == [TASKS[1]]
        markdown = (out / "report.md").read_text()
        assert "## Infrastructure errors (not results)" in markdown and f"{errors[0]['key']}:" in markdown

        server.replies.extend([Scripted(200, REPLY)] * 2)  # the API works again: resume
        again = _main(command, _env(OPENAI_API_KEY=KEY))
        assert again.returncode == 0, again.stderr
        assert "1 episode(s) run" in again.stdout  # only the failed one ran again
    finally:
        server.close()
    assert sorted(r["task_id"] for r in _rows(out / "results.jsonl")) == sorted(TASKS)
    report = _main(["report", str(out), "--json"])
    numbers = json.loads(report.stdout)
    assert numbers["episodes"] == 2 and numbers["infrastructure_errors"] == []
    assert "Infrastructure errors" not in (out / "report.md").read_text()


@pytest.mark.parametrize(("case", "args", "env_keys", "message"), [
    ("out is a file", ["--out", "{file}"], {}, "is a file"),
    ("out inside a file", ["--out", "{file}/run"], {}, "cannot write results into"),
    ("unwritable place", ["--out", "/proc/pokegym-run"], {}, "cannot write results into"),
    ("bad tasks", ["--tasks", "q99*", "--out", "{folder}"], {}, "no task matches 'q99*'"),
    ("unknown agent", ["--agent", "gpt", "--out", "{folder}"], {}, "unknown agent 'gpt'"),
    ("missing key", ["--agent", "model:gpt-5.2", "--out", "{folder}"], {}, "set OPENAI_API_KEY"),
    ("missing replay file", ["--agent", "replay:nowhere.h5", "--out", "{folder}"], {}, "no such file"),
    ("no trials", ["--trials", "0", "--out", "{folder}"], {}, "--trials must be at least 1"),
    ("no workers", ["--workers", "0", "--out", "{folder}"], {}, "got 0; this machine fits"),
    ("negative workers", ["--workers", "-4", "--out", "{folder}"], {}, "--workers must be at least 1, got -4"),
    ("more workers than memory", ["--workers", "100000", "--out", "{folder}"], {}, "GiB is available; at most"),
])
def test_a_mistake_gives_one_line_and_leaves_no_folder(tmp_path, case, args, env_keys, message):
    file, folder = tmp_path / "notes.txt", tmp_path / "run"
    file.write_text("my notes\n")
    args = [a.format(file=file, folder=folder) for a in args]
    done = _main(["run", "--tasks", "q08_site_navigation", "--budget", "1", *args], _env(**env_keys), timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert not folder.exists()  # nothing half-made to clean up or to mistake for a run
    assert file.read_text() == "my notes\n"


def test_workers_auto_picks_a_count_the_rate_limit_and_machine_allow():
    done = _main(["run", "--tasks", "q08_site_navigation", "--workers", "auto", "--concurrent-requests", "3",
                  "--dry-run"], timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--workers auto: 3 episodes at once (limited by the model rate limit given)" in done.stdout
    done = _main(["run", "--tasks", "q08_site_navigation", "--workers", "auto", "--dry-run"], timeout=120)
    chosen = int(done.stdout.split("--workers auto: ")[1].split()[0])
    refused = _main(["run", "--tasks", "q08_site_navigation", "--workers", "0", "--dry-run"], timeout=120)
    assert f"this machine fits {chosen} " in refused.stderr  # the refusal names the count auto picks


def test_error_rows_written_by_older_versions_are_counted_apart_and_rerun(tmp_path):
    """Before errors.jsonl, results.jsonl held infrastructure errors as rows with end_reason "error"."""
    from core.analysis.report import build_report
    from core.session.run_folder import finished_keys

    common = {"agent": "random", "agent_spec": "random", "granularity": "goal_only", "category": "navigation",
              "quest": "q08_construction_site", "task_id": "q08_site_navigation", "episode": None}
    rows = [{**common, "key": "a", "success": True, "success_step": 3, "end_reason": "success",
             "metrics": {"im_rate": 0.0}},
            {**common, "key": "b", "success": False, "end_reason": "error", "error": "the game failed: gone\nmore"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert finished_keys(tmp_path) == {"a"}  # a resume runs "b" again
    report = build_report(tmp_path)
    assert report["episodes"] == 1 and report["sr"][0]["overall"] == 1.0  # not 50%: the error is no failure
    assert report["infrastructure_errors"] == [{"key": "b", "end_reason": "error", "agent": "random",
                                                "task_id": "q08_site_navigation", "granularity": "goal_only",
                                                "error": "the game failed: gone"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, {**rows[0], "key": "b"}]))
    assert build_report(tmp_path)["infrastructure_errors"] == []  # retried with a result: resolved
