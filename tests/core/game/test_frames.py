"""The shared-memory frame ring: readers never see a torn frame, and can read without copying."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from core.game.frames import FrameRing

WIDTH, HEIGHT = 640, 360


def test_a_frame_written_is_the_frame_read(tmp_path):
    ring = FrameRing.create(tmp_path / "frames.bin", WIDTH, HEIGHT)
    reader = FrameRing.attach(tmp_path / "frames.bin")
    assert reader.latest() is None
    pixels = np.random.default_rng(0).integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    number = ring.write(pixels, tick=42)
    frame = reader.latest()
    assert (frame.frame_no, frame.tick) == (number, 42)
    assert np.array_equal(frame.pixels, pixels)
    view = reader.latest_view()
    assert not view.pixels.flags.owndata and view.intact()  # zero-copy, and still valid
    ring.write(pixels, 43)
    ring.write(pixels, 44)
    assert not view.intact()  # two newer frames reused its slot: the reader is told


# The writer writes a frame about every millisecond: four times the fastest world (about 250 frames/s at
# 640x360). Unpaced, it wrote thousands a second, and on 2 loaded cores a reader of 2 slots could not copy one
# in 64 tries (TornFrameError, which says to look for a writer in a tight loop): seen in the quick subset.
WRITE_PERIOD_S = 0.001


def test_a_reader_never_sees_a_torn_frame_while_the_world_writes(tmp_path):
    path = tmp_path / "frames.bin"
    with subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        import numpy as np
        from core.game.frames import FrameRing
        ring = FrameRing.create(Path({str(path)!r}), {WIDTH}, {HEIGHT})
        frame = np.empty(({HEIGHT}, {WIDTH}, 3), np.uint8)
        print("go", flush=True)
        tick, stop = 0, time.monotonic() + 2.0
        while time.monotonic() < stop:
            tick += 1
            frame[:] = tick % 251
            ring.write(frame, tick)
            time.sleep({WRITE_PERIOD_S})
    """)], stdout=subprocess.PIPE, text=True) as writer:  # `with`: its pipe closed however the test ends
        assert writer.stdout.readline().strip() == "go"
        reader = FrameRing.attach(path)
        copies, intact_views = 0, 0
        while writer.poll() is None:
            frame = reader.latest()
            if frame is not None:
                copies += 1
                values = np.unique(frame.pixels)
                assert len(values) == 1, f"torn frame {frame.frame_no}: values {values[:8]}"
                assert values[0] == frame.tick % 251
            view = reader.latest_view()
            if view is not None:
                first, last = int(view.pixels[0, 0, 0]), int(view.pixels[-1, -1, 2])
                if view.intact():  # a zero-copy reader trusts only what it read before intact() said yes
                    intact_views += 1
                    assert first == last == view.frame.tick % 251
        assert writer.wait() == 0
    assert copies > 20 and intact_views > 20


def test_bad_resolutions_are_refused(tmp_path):
    with pytest.raises(ValueError, match="resolution 8x8 is not supported"):
        FrameRing.create(tmp_path / "f.bin", 8, 8)
