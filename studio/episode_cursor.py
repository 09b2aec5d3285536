"""EpisodeCursor: which step of an episode the panes show, and how it moves.

Live and Replay share one pane set (studio/episode_panes.py); they differ in how this cursor moves. A
following cursor (Live) stays on the newest step as steps arrive, until the user picks an earlier one;
`follow()` brings it back. A plain cursor (Replay) moves only when the user or playback moves it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class EpisodeCursor(QObject):
    sig_moved = Signal(int)          # the step position now shown (0-based; -1: the episode has no steps)
    sig_following = Signal(bool)     # whether the cursor follows the newest step

    def __init__(self, follows_newest: bool = False) -> None:
        super().__init__()
        self.follows_newest = follows_newest
        self.following = follows_newest
        self.index = -1
        self.length = 0

    def reset(self, length: int) -> None:
        """A new episode of `length` steps: a following cursor sits on its newest step, a plain one on its first."""
        self.length = length
        self._set_following(self.follows_newest)
        self._place(length - 1 if self.following else min(0, length - 1), force=True)

    def grown(self, length: int) -> None:
        """Steps were appended: a following cursor moves along."""
        self.length = length
        if self.following:
            self._place(length - 1)

    def move_to(self, index: int) -> None:
        """The user (or playback) chose a step: a following cursor stops following."""
        if self.follows_newest:
            self._set_following(False)
        self._place(max(0, min(int(index), self.length - 1)), force=True)

    def follow(self) -> None:
        """Back to the newest step, and stay there as steps arrive."""
        self._set_following(True)
        self._place(self.length - 1, force=True)

    def _place(self, index: int, force: bool = False) -> None:
        if index != self.index or force:
            self.index = index
            self.sig_moved.emit(index)

    def _set_following(self, following: bool) -> None:
        if following != self.following:
            self.following = following
            self.sig_following.emit(following)
