"""The run's progress display: a bar, the count of running episodes and an ETA on every finished episode, and
on a terminal a status line redrawn in place (and cleared before the next episode's line)."""

from __future__ import annotations

import io

from core.cli.progress import RunProgress, duration
from core.session.batch_driver import BatchStatus

ROW = {"key": "q08_site_navigation__goal_only__random__t0", "success": False, "end_reason": "budget",
       "steps_used": 12}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_eta_follows_this_runs_pace_and_is_unknown_before_the_first_episode():
    assert BatchStatus(done=2, total=10, running=2, finished_now=0, elapsed_s=30).eta_s is None
    # 4 episodes in 60 s (2 more were done by an earlier, resumed call): 4 left at 15 s each
    assert BatchStatus(done=6, total=10, running=2, finished_now=4, elapsed_s=60).eta_s == 60
    assert duration(None) == "?" and duration(42) == "42 s" and duration(125) == "2 min 05 s"
    assert duration(3 * 3600 + 120) == "3 h 02 min"


def test_each_finished_episode_prints_a_bar_the_running_count_and_an_eta():
    out = io.StringIO()
    progress = RunProgress(out)
    progress.status(BatchStatus(done=0, total=4, running=2, finished_now=0, elapsed_s=1))
    progress.episode(1, 4, ROW)
    line = out.getvalue().splitlines()[-1]
    assert line.startswith(f"[######------------------] 1/4  {ROW['key']}: budget after 12")
    assert "2 running; ETA " in line and "ETA ?" not in line
    assert "\r" not in out.getvalue()  # not a terminal: no status line redrawn in place


def test_on_a_terminal_the_status_line_is_redrawn_and_cleared_before_an_episode_line():
    out = Terminal()
    progress = RunProgress(out)
    progress.status(BatchStatus(done=1, total=4, running=2, finished_now=1, elapsed_s=10))
    assert out.getvalue().endswith("1/4 done, 2 running, ETA 30 s")
    progress.episode(2, 4, {**ROW, "success": True})
    assert "\r\x1b[K[############------------] 2/4" in out.getvalue()
    assert out.getvalue().endswith("\n") and "success after 12 steps" in out.getvalue()
