"""LiveRingSource: the live game's sound as it is played, read from its audio ring on the feeder thread.

It knows the newest tick it has handed on and, at each pull, reads the ticks the ring has gained since
(docs/audio-ring.md: a read is never torn, and any thread may read while another drives the game). In
real time the ring gains a tick every 1/30 s; in lockstep it gains a step's ticks as the step runs (a burst,
or one tick at a time when the world is paced), and they are played as they appear. A new game (a restart,
another backend) or a new epoch (a reset, a restore) is followed from its newest ticks: nothing older
than MAX_BACKLOG_S is ever played late. The game comes from the GameHost (GameHost.heard_game), without a
drive: reading the ring holds no pad.
"""

from __future__ import annotations

import time

from core.game.audio_ring import AudioUnavailableError
from core.game.errors import GameError
from studio.audio_feeder import MAX_BACKLOG_S, Chunk
from studio.game_host import GameHost, HeardGame


class LiveRingSource:
    live = True

    def __init__(self, host: GameHost) -> None:
        self.host = host
        self._game: HeardGame | None = None
        self._epoch = -1
        self._next = 0  # the next tick to hand on
        self.ticks_read = 0
        # ticks of the game and epoch being followed that came while the feeder was away longer than
        # MAX_BACKLOG_S (starved, or a read that failed): never played late, never handed on
        self.ticks_skipped = 0
        self.gaps = 0  # reads that failed (the ring moved on, or the game closed, while we read)

    @property
    def handed_to(self) -> int:
        """The newest tick handed on, of the game and epoch followed."""
        return self._next - 1

    def audio_format(self) -> tuple[int, int] | None:
        game = self.host.heard_game()
        fmt = game.info.audio if game is not None else None
        return (fmt.rate, fmt.channels) if fmt is not None else None

    def pull(self) -> list[Chunk]:
        game = self.host.heard_game()
        if game is None:
            self._game = None
            return []
        try:
            return self._pull(game)
        except (AudioUnavailableError, GameError, ValueError, AttributeError, BufferError):
            # The ring moved on (or the game closed) while we read: the next pull goes on from the next tick not
            # handed on, as far as the backlog allows (a closed game is followed afresh once it is replaced).
            self.gaps += 1
            return []

    def _pull(self, game: HeardGame) -> list[Chunk]:
        held = game.audio_held()
        fmt = game.info.audio
        if held is None or fmt is None:
            return []
        backlog_ticks = max(1, int(MAX_BACKLOG_S * fmt.rate / fmt.samples_per_tick))
        if game is not self._game or held.epoch != self._epoch:
            # A game or epoch we have not followed: from its newest ticks (a fresh epoch from its first).
            self._game, self._epoch = game, held.epoch
            self._next = max(held.first, held.last - backlog_ticks + 1)
        if held.last < self._next:
            return []
        first = max(self._next, held.first, held.last - backlog_ticks + 1)
        arrived = time.monotonic()
        clip = game.audio_ticks(first, held.last)
        self.ticks_skipped += first - self._next  # counted once read: a read that fails is retried from _next
        self.ticks_read += held.last - first + 1
        self._next = held.last + 1
        return [Chunk(clip.samples, arrived)]
