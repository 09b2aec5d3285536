"""A game's windows: the processes of its tree, the windows they show, and which one is the game's."""

from __future__ import annotations

import os
import re
from pathlib import Path

from core.game.external.x11 import WindowInfo, describe_windows
from core.scaffold.errors import ScaffoldError


def process_tree(root: int) -> set[int]:
    """`root` and every live descendant of it (Linux /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry)] = int(fields[1])
    tree = {root}
    grown = True
    while grown:
        before = len(tree)
        tree |= {pid for pid, parent in parents.items() if parent in tree}
        grown = len(tree) != before
    return tree


def game_windows(windows: list[WindowInfo], tree: set[int], own_display: bool) -> list[WindowInfo]:
    """The windows the game's processes show. On a display of our own every window is the game's, also those
    that do not say their pid (_NET_WM_PID is optional); on the user's display only windows of the tree count."""
    return [w for w in windows if w.pid in tree or (own_display and w.pid is None)]


def pick_window(windows: list[WindowInfo], candidates: list[WindowInfo], title_regex: str | None) -> WindowInfo:
    """The game's window: the largest of `candidates` (the game's own), or the largest whose title matches
    `title_regex` (any window on the display, for games whose pid the windows do not say)."""
    if title_regex is not None:
        try:
            pattern = re.compile(title_regex)
        except re.error as exc:
            raise ScaffoldError(f"--window {title_regex!r} is not a regular expression ({exc})") from None
        matching = [w for w in windows if pattern.search(w.title)]
        if not matching:
            raise ScaffoldError(f"no window titled like {title_regex!r} (--window); windows shown: "
                                f"{describe_windows(windows)}")
        return max(matching, key=_area)
    if not candidates:
        raise ScaffoldError(f"none of the windows shown belongs to the game's processes; windows shown: "
                            f"{describe_windows(windows)}. Choose one with --window REGEX")
    return max(candidates, key=_area)


def _area(window: WindowInfo) -> int:
    return window.width * window.height


def title_regex(title: str) -> str:
    """A regex for this exact title, anchored at its start: what `frames.window_title` should say."""
    return "^" + re.escape(title).replace("\\ ", " ") + "$"
