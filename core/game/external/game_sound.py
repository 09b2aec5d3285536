"""An external game's sound, as its backend's `external.audio` says: where it plays, and its capture.

`private` starts a sound server of our own for the game (sound_server.py) and points the game at it;
`system` captures what the user's own sound server plays; `none` leaves the game silent to us. Either
way the capture (audio_capture.py) fills an audio ring keyed by the frames' ticks. A sound server or
recorder that fails to start never stops the game: it runs without sound, `problem` says why once, and
the game offers no AUDIO capability, so episodes record `audio: unavailable` rather than silence.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from core.audio.clip import AudioClip
from core.game.audio_ring import AudioFormat
from core.game.errors import GameStartError
from core.game.external.audio_capture import AudioCapture
from core.game.external.guard_client import InputGuard
from core.game.external.launcher import Launcher
from core.game.external.sound_server import PrivateSoundServer
from core.game.external.spec import GameAudio

log = logging.getLogger(__name__)
# Set to "off" to run every external game silent whatever its backend says (memory finding: a game's sound
# library keeps copies of the player's position, its listener's, that a search then has to tell apart).
SOUND_SWITCH = "POKEGYM_GAME_SOUND"
SYSTEM_MONITOR = "@DEFAULT_MONITOR@"  # the user's server: what its default output plays


class GameSound:
    def __init__(self, settings: GameAudio, guard: InputGuard | None = None) -> None:
        self.settings = settings
        self.guard = guard
        self.server: PrivateSoundServer | None = None
        self.capture: AudioCapture | None = None
        self.problem: str | None = None  # why there is no sound, when the backend asked for it

    @classmethod
    def start(cls, settings: GameAudio, runtime_dir: Path, fps: float, guard: InputGuard | None,
              launcher: Launcher | None, game_name: str) -> GameSound:
        """Start what the settings ask for before the game is launched (it must find its sound server)."""
        sound = cls(settings, guard)
        if settings.source == "none" or os.environ.get(SOUND_SWITCH, "").lower() == "off":
            return sound
        try:
            env = dict(os.environ)
            if settings.source == "private":
                if sys.platform == "win32":
                    raise GameStartError("on Windows a game's sound is captured from the system's output (WASAPI "
                                         "loopback): set the backend's external.audio.source to `system`")
                if launcher is None:
                    raise GameStartError("a game we attach to plays through your own sound server: set the "
                                         "backend's external.audio.source to `system` to capture it")
                sound.server = PrivateSoundServer.start(runtime_dir, settings.rate, settings.channels)
                if guard is not None:  # ended with us even if we are killed outright
                    guard.say(f"group {sound.server.process.pid}")
                env["PULSE_SERVER"] = sound.server.address
                source = sound.server.monitor
            else:
                source = SYSTEM_MONITOR
            sound.capture = AudioCapture.start(runtime_dir, source, env, settings.rate, settings.channels, fps,
                                               settings.latency_ms)
            if guard is not None:
                guard.say(f"group {sound.capture.pid}")
            if launcher is not None:
                launcher.subs.values["sound"] = "true"
                if sound.server is not None:
                    launcher.extra_env.update(sound.server.client_env)
        except GameStartError as exc:
            sound.close()
            sound.problem = str(exc)
            log.warning("%s runs without sound: %s", game_name, exc)
        return sound

    @property
    def format(self) -> AudioFormat | None:
        """The sound's format while it is being captured; None when the game is silent to us."""
        if self.capture is None or self.capture.problem is not None:
            return None
        return self.capture.format

    def use_clock(self, tick_at: Callable[[float], int]) -> None:
        if self.capture is not None:
            self.capture.use_clock(tick_at)

    def read(self, first_tick: int, last_tick: int) -> AudioClip:
        assert self.capture is not None
        return AudioClip(self.capture.format.rate, self.capture.read(first_tick, last_tick))

    def close(self) -> None:
        if self.capture is not None:
            pid = self.capture.pid
            self.capture.close()
            self.capture = None
            self._ungroup(pid)
        if self.server is not None:
            pid = self.server.process.pid
            self.server.stop()
            self.server = None
            self._ungroup(pid)

    def _ungroup(self, pid: int) -> None:
        if self.guard is not None:  # ended and reaped: the guard must not signal that group id again
            self.guard.say(f"ungroup {pid}")
