"""An external game's sound, without a game: a private sound server, a tone played into it as a game would,
and the capture that keys it by ticks into the audio ring. Minetest's own sound: tests/core/game/external/
test_minetest.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from core.backends.profile import load_backend
from core.game.external.audio_capture import AudioCapture
from core.game.external.game_sound import GameSound
from core.game.external.launcher import Launcher
from core.game.external.spec import GameAudio

pytestmark = pytest.mark.skipif(shutil.which("pulseaudio") is None or shutil.which("pacat") is None,
                                reason="PulseAudio is not installed (.ci/run installs it)")
if os.environ.get("POKEGYM_REQUIRE_MINETEST") and (shutil.which("pulseaudio") is None or shutil.which("pacat") is None):
    raise RuntimeError("POKEGYM_REQUIRE_MINETEST is set but pulseaudio is missing (.ci/run installs it)")

FPS = 30.0
RATE = 48000


def _tone(seconds: float, hz: float = 440.0, level: int = 8000) -> bytes:
    t = np.arange(int(seconds * RATE)) / RATE
    mono = (level * np.sin(2 * np.pi * hz * t)).astype(np.int16)
    return np.stack([mono, mono // 4], axis=1).tobytes()  # louder on the left


def _play(address: str, pcm: bytes) -> None:
    """What a game does: play PCM into its default sink (the private server's)."""
    subprocess.run(["pacat", "--format=s16le", f"--rate={RATE}", "--channels=2", "--latency-msec=20"],
                   input=pcm, env={**os.environ, "PULSE_SERVER": address}, check=True, timeout=30)


def test_a_tone_played_into_the_private_server_is_captured_at_its_ticks(tmp_path: Path):
    backend = load_backend("minetest")
    assert backend.external is not None
    launcher = Launcher(backend.external, backend.directory, tmp_path, 640, 360)
    sound = GameSound.start(GameAudio(source="private", rate=RATE), tmp_path, FPS, None, launcher, "test game")
    try:
        assert sound.problem is None and sound.server is not None and sound.capture is not None
        assert launcher.subs.values["sound"] == "true"  # the game's config turns its sound on
        assert launcher.extra_env["PULSE_SERVER"] == sound.server.address  # and it plays into our server
        assert oct(sound.server.folder.stat().st_mode & 0o777) == "0o700"
        origin = time.monotonic()
        sound.use_clock(lambda moment: int((moment - origin) * FPS))
        capture = sound.capture
        # The idle sink's silence is captured too, so ticks keep coming (the recorder's first block takes about 2 s).
        assert capture.wait_for_tick(int((time.monotonic() - origin) * FPS), 5.0)
        assert capture.wait_for_tick(int((time.monotonic() - origin) * FPS) + 10, 2.0)
        before = int((time.monotonic() - origin) * FPS)
        _play(sound.server.address, _tone(1.0))
        after = int((time.monotonic() - origin) * FPS)
        clip = sound.read(before - 8, after + 3)
        assert clip.rate == RATE and clip.samples.shape[1] == 2
        assert len(clip.samples) == (after + 3 - (before - 8) + 1) * 1600  # 48000 / 30 samples per tick
        loud = np.flatnonzero(np.abs(clip.samples[:, 0]) > 1000)
        assert len(loud) > 0.8 * RATE  # the whole second of the tone is there
        # Where the tone landed, by ticks: within the span it was played in (give or take the recorder's delay).
        first_loud_tick = before - 8 + loud[0] // 1600
        assert before - 3 <= first_loud_tick <= before + 6, (before, first_loud_tick, after)
        left, right = (float(np.sqrt(np.mean(clip.samples[loud, c].astype(float) ** 2))) for c in (0, 1))
        assert 3.0 < left / right < 5.0  # the channels are the game's left and right, in order
        counts = capture.counts()
        assert counts.ticks > 0 and counts.dropped == 0
    finally:
        sound.close()
    assert sound.capture is None and sound.server is None


def test_sound_recorded_before_a_new_game_process_s_first_frame_is_dropped_and_capture_goes_on(tmp_path: Path):
    """A restart: the recorder's next block holds sound played before the new process's first frame (tick 0).
    Those samples have no tick; the capture drops them and keys what follows from tick 0 (it once crashed its
    thread on tick -1, and the game was silent from then on)."""
    backend = load_backend("minetest")
    assert backend.external is not None
    launcher = Launcher(backend.external, backend.directory, tmp_path, 640, 360)
    sound = GameSound.start(GameAudio(source="private", rate=RATE), tmp_path, FPS, None, launcher, "test game")
    try:
        assert sound.capture is not None
        capture = sound.capture
        origin = time.monotonic()
        sound.use_clock(lambda moment: int((moment - origin) * FPS))  # the first process
        assert capture.wait_for_tick(int((time.monotonic() - origin) * FPS) + 5, 10.0)  # its sound flows
        first_epoch = capture.ring.epoch
        first_frame = time.monotonic() + 0.5  # restarted: the new process's first frame is half a second away
        sound.use_clock(lambda moment: int((moment - first_frame) * FPS) if moment >= first_frame
                        else -1 - int((first_frame - moment) * FPS))
        deadline = time.monotonic() + 10.0
        while capture.ring.epoch == first_epoch and capture.problem is None and time.monotonic() < deadline:
            capture.wait_for_tick(1 << 40, 0.05)  # (returns when sound arrives or the capture stops)
        assert capture.ring.epoch != first_epoch and capture.wait_for_tick(15, 10.0), capture.problem
        held = capture.ring.ticks_held()
        assert capture.problem is None and held is not None and 0 <= held[0] <= 2, (held, capture.problem)
        assert capture.counts().dropped > 0  # what came before the first frame
    finally:
        sound.close()


def test_a_game_whose_sound_server_cannot_start_runs_silent_and_says_why(tmp_path: Path, monkeypatch, caplog):
    monkeypatch.setenv("PATH", "/nonexistent")  # as on a machine without PulseAudio
    backend = load_backend("minetest")
    assert backend.external is not None
    launcher = Launcher(backend.external, backend.directory, tmp_path, 640, 360)
    sound = GameSound.start(GameAudio(source="private"), tmp_path, FPS, None, launcher, "minetest")
    assert sound.format is None
    assert sound.problem is not None and "apt-get install pulseaudio" in sound.problem
    assert launcher.subs.values["sound"] == "false" and "PULSE_SERVER" not in launcher.extra_env
    assert [r.getMessage() for r in caplog.records if "without sound" in r.getMessage()] == \
        [f"minetest runs without sound: {sound.problem}"]


def test_a_rate_that_is_not_whole_samples_per_frame_is_refused(tmp_path: Path):
    with pytest.raises(Exception, match="whole number of samples per frame"):
        AudioCapture.start(tmp_path, "x.monitor", dict(os.environ), 44000, 2, 30.0, 20)
