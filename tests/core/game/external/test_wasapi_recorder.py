"""The Windows sound recorder up to the line this machine cannot cross (WASAPI itself): the stream it writes
is the one `parec` writes, it stays continuous through the silence WASAPI loopback sends nothing for, and on
Windows the capture runs it, while a private sound server (PulseAudio) is refused with what to set instead."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np

from core.game.external import audio_capture
from core.game.external.game_sound import GameSound
from core.game.external.spec import GameAudio
from core.game.external.wasapi_recorder import keep_up, record, to_pcm16

RATE, CHANNELS, BLOCK_S = 48000, 2, 0.02
PER_BLOCK = int(RATE * BLOCK_S)


def test_float_samples_become_interleaved_little_endian_int16_clipped_at_full_scale():
    block = np.array([[0.5, -0.5], [1.5, -2.0], [0.0, 1.0]], np.float32)
    assert np.frombuffer(to_pcm16(block, CHANNELS), "<i2").tolist() == [16384, -16384, 32767, -32767, 0, 32767]


def test_nothing_arrived_is_silence_up_to_what_the_clock_says_has_played():
    padded = keep_up(np.zeros((0, CHANNELS), np.float32), written=100, due=100 + PER_BLOCK, channels=CHANNELS)
    assert padded.shape == (PER_BLOCK, CHANNELS) and not padded.any()
    burst = np.ones((3 * PER_BLOCK, CHANNELS), np.float32)  # a late burst is written whole, never cut
    assert keep_up(burst, written=0, due=PER_BLOCK, channels=CHANNELS).shape == burst.shape


def test_the_stream_stays_continuous_through_a_silence_that_sends_no_packets():
    """10 blocks: a tone in the first 3, nothing at all from WASAPI in the next 4 (silence), the tone again."""
    now = [0.0]
    tone = (0.25 * np.sin(np.arange(PER_BLOCK) / 10.0)).astype(np.float32)[:, None].repeat(CHANNELS, 1)
    delivered = iter([tone] * 3 + [np.zeros((0, CHANNELS), np.float32)] * 4 + [tone] * 3)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    out = io.BytesIO()
    record(lambda: next(delivered), out, RATE, CHANNELS, BLOCK_S, clock=lambda: now[0], sleep=sleep, blocks=10)
    pcm = np.frombuffer(out.getvalue(), "<i2").reshape(-1, CHANNELS)
    assert len(pcm) == 10 * PER_BLOCK  # as long as the time that passed: ticks keep their places
    assert not pcm[3 * PER_BLOCK:7 * PER_BLOCK].any()
    assert np.abs(pcm[:3 * PER_BLOCK]).max() > 8000 and np.abs(pcm[7 * PER_BLOCK:]).max() > 8000


def test_off_windows_the_recorder_refuses_in_one_line_naming_what_records_there():
    done = subprocess.run([sys.executable, "-m", "core.game.external.wasapi_recorder", "--rate", "48000",
                           "--channels", "2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("the WASAPI recorder runs on Windows only; on Linux the game's sound is recorded "
                                   "with parec")


def test_on_windows_the_capture_runs_the_wasapi_recorder(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    command = audio_capture.recorder_command("@DEFAULT_MONITOR@", 48000, 2, 20)
    assert command == [sys.executable, "-m", "core.game.external.wasapi_recorder", "--rate", "48000",
                       "--channels", "2", "--block-ms", "20"]


def test_on_windows_a_private_sound_server_is_refused_and_the_game_runs_silent(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delenv("POKEGYM_GAME_SOUND", raising=False)
    sound = GameSound.start(GameAudio(source="private"), tmp_path, 30.0, None, None, "a game")
    assert sound.format is None and sound.capture is None and sound.server is None
    assert sound.problem is not None and "external.audio.source to `system`" in sound.problem

