"""The Windows sound recorder for external games: WASAPI loopback of the default output device, as raw s16le on
standard output, the stream `parec` gives on Linux (core/game/external/audio_capture.py reads either).

    python -m core.game.external.wasapi_recorder --rate 48000 --channels 2 --block-ms 20

It records through SoundCard (`pip install soundcard`, imported only here, only on Windows). What it hears is
the whole system's output, not the game's process alone: capturing one process needs Windows 10 2004's
process-loopback activation, which no well-kept Python package offers. Untested here (no Windows machine):
docs/backend-format.md#audio says so.

WASAPI loopback delivers no packets while nothing plays, so the recorder keeps the stream continuous itself:
each block it writes what arrived, padded with silence up to what the wall clock says has been played.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import BinaryIO

import numpy as np


def to_pcm16(block: np.ndarray, channels: int) -> bytes:
    """SoundCard's float samples in [-1, 1], (frames, channels), as interleaved little-endian int16."""
    samples = np.asarray(block, np.float32).reshape(-1, channels)
    return (np.clip(samples, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()


def keep_up(arrived: np.ndarray, written: int, due: int, channels: int) -> np.ndarray:
    """What arrived, padded with silence so that `written` frames so far plus these reach `due` (the frames the
    wall clock says have played): the silence WASAPI loopback sends no packets for."""
    short = due - written - len(arrived)
    if short <= 0:
        return arrived
    return np.concatenate([np.asarray(arrived, np.float32).reshape(-1, channels),
                           np.zeros((short, channels), np.float32)])


def record(read: Callable[[], np.ndarray], out: BinaryIO, rate: int, channels: int, block_s: float,
           clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
           blocks: int | None = None) -> None:
    """Every `block_s`, what `read` returns (all frames available), kept up with the clock, to `out`."""
    started, written, done = clock(), 0, 0
    while blocks is None or done < blocks:
        sleep(block_s)
        block = keep_up(read(), written, int((clock() - started) * rate), channels)
        out.write(to_pcm16(block, channels))
        out.flush()
        written += len(block)
        done += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.game.external.wasapi_recorder")
    parser.add_argument("--rate", type=int, required=True)
    parser.add_argument("--channels", type=int, required=True)
    parser.add_argument("--block-ms", type=int, default=20)
    args = parser.parse_args(argv)
    if sys.platform != "win32":
        print("the WASAPI recorder runs on Windows only; on Linux the game's sound is recorded with parec",
              file=sys.stderr)
        return 2
    try:
        import soundcard
    except ImportError:
        print("capturing a game's sound on Windows needs SoundCard: pip install soundcard", file=sys.stderr)
        return 2
    speaker = soundcard.default_speaker()
    microphone = soundcard.get_microphone(id=str(speaker.name), include_loopback=True)
    with microphone.recorder(samplerate=args.rate, channels=args.channels) as recorder:
        record(lambda: recorder.record(numframes=None), sys.stdout.buffer, args.rate, args.channels,
               args.block_ms / 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
