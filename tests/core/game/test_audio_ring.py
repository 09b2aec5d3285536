"""The shared-memory audio ring: what was played is what is read, never torn, and gaps are said plainly."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from core.game.audio_ring import AudioFormat, AudioRing, AudioUnavailableError

FORMAT = AudioFormat(rate=24000, channels=2, samples_per_tick=800)


def _ticks(first: int, count: int) -> np.ndarray:
    """PCM whose every sample says which tick it belongs to (and which channel)."""
    ticks = np.repeat(np.arange(first, first + count), FORMAT.samples_per_tick)
    return np.stack([ticks % 30000, -(ticks % 30000)], axis=1).astype(np.int16)


def test_ticks_written_in_any_grouping_are_read_back_exactly(tmp_path):
    ring = AudioRing.create(tmp_path / "audio.bin", FORMAT, capacity=50)
    reader = AudioRing.attach(tmp_path / "audio.bin")
    assert reader.format == FORMAT and reader.capacity == 50
    ring.begin_epoch()
    tick = 1
    for count in (1, 15, 7, 30, 15):  # 68 ticks: the ring has wrapped round
        ring.write(tick, _ticks(tick, count))
        tick += count
    assert np.array_equal(reader.read(40, 67), _ticks(40, 28))
    assert reader.ticks_held() == (19, 68)  # the last 50
    ring.close()
    reader.close()


def test_ticks_gone_or_not_played_yet_are_refused_with_the_reason(tmp_path):
    ring = AudioRing.create(tmp_path / "audio.bin", FORMAT, capacity=20)
    reader = AudioRing.attach(tmp_path / "audio.bin")
    ring.begin_epoch()
    with pytest.raises(AudioUnavailableError, match="no tick has been played since the last reset"):
        reader.read(1, 1)
    ring.write(1, _ticks(1, 45))
    with pytest.raises(AudioUnavailableError, match=r"ticks 1\.\.10 are gone .* holds ticks 26\.\.45 .* last 20 ticks"):
        reader.read(1, 10)
    with pytest.raises(AudioUnavailableError, match="ticks 45..46 have not been played yet: the game is at tick 45"):
        reader.read(45, 46)
    ring.begin_epoch()  # a reset: the tick counter starts again
    ring.write(1, _ticks(101, 5))
    assert np.array_equal(reader.read(1, 5), _ticks(101, 5))  # the new tick 1, not the old one
    with pytest.raises(AudioUnavailableError, match="not been played yet"):
        reader.read(30, 40)  # the old epoch's ticks are not this epoch's
    ring.close()
    reader.close()


def test_a_file_that_is_not_an_audio_ring_is_refused(tmp_path):
    (tmp_path / "frames.bin").write_bytes(b"PGFR" + bytes(200))
    with pytest.raises(ValueError, match="not a version-1 audio ring"):
        AudioRing.attach(tmp_path / "frames.bin")


def test_a_reader_never_sees_a_torn_tick_while_the_world_writes(tmp_path):
    """The writer in another process, in real time's worst case (one tick at a time, flat out): every tick a
    reader gets holds that tick's samples and no other's."""
    path = tmp_path / "audio.bin"
    with subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        import numpy as np
        from core.game.audio_ring import AudioFormat, AudioRing
        ring = AudioRing.create(Path({str(path)!r}), AudioFormat(24000, 2, 800), capacity=32)
        ring.begin_epoch()
        print("go", flush=True)
        tick, stop = 0, time.monotonic() + 2.0
        while time.monotonic() < stop:
            tick += 1
            ring.write(tick, np.full((800, 2), tick % 30000, np.int16))
    """)], stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout.readline().strip() == "go"
        reader = AudioRing.attach(path)
        reads = refusals = 0
        while writer.poll() is None:
            held = reader.ticks_held()
            if held is None:
                continue
            first = max(held[0], held[1] - 10)
            try:
                pcm = reader.read(first, first + 8)
            except AudioUnavailableError:
                refusals += 1  # overtaken while reading: said so, never torn
                continue
            reads += 1
            expected = np.repeat(np.arange(first, first + 9) % 30000, 800)
            assert np.array_equal(pcm[:, 0], expected) and np.array_equal(pcm[:, 1], expected)
        reader.close()
    assert writer.returncode == 0 and reads > 100
