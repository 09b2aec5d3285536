"""Regenerate the README's sound examples: docs/sounds/walk.wav and docs/images/sound_spectrogram.png.

    python docs/make_sound_examples.py [--out DIR]

Drives the built-in world through short scripted scenes (holds from inline start states, as a task's start
would be) and keeps exactly what the harness receives: the PCM of each step's ticks from the audio ring. The
picture labels each scene; the WAV is one continuous walk of about three seconds (cobbles, grass, a fence).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.audio.picture import spectrogram_image
from core.audio.wav import write_wav
from core.game.builtin import BuiltinWorld
from core.game.pad import Button, PadState

WALK = 1.0
BELL_PERIOD_S = 20.0  # the town's bell: assets/worlds/town/world.yaml, sound.sources[bell]
A = PadState(buttons=frozenset({Button.A}))


@dataclass
class Scene:
    label: str
    start: dict[str, object]
    holds: list[tuple[PadState, float]]
    wait_s: float = 0.0  # held still before the part that is kept (to reach the bell's stroke)
    pcm: list[np.ndarray] = field(default_factory=list)


def _start(x: float, y: float, facing: float, yaw: float | None = None) -> dict[str, object]:
    return {"pos": [x, y], "facing": facing, "camera_yaw": facing if yaw is None else yaw, "camera_pitch": -12,
            "flags": []}


SCENES = [
    Scene("cobbles, then asphalt", _start(0, -6, 180), [(PadState(left_y=WALK), 3.0)]),
    Scene("grass, then the footbridge over the stream", _start(-64, -62, -90), [(PadState(left_y=WALK), 3.0)]),
    Scene("dirt path", _start(-3, -46, 90), [(PadState(left_y=WALK), 2.0)]),
    Scene("sand by the stream", _start(-49.3, -9, 0), [(PadState(left_y=WALK), 2.0)]),
    Scene("grass into the park fence (bump, pressing)", _start(-5, -60, 90), [(PadState(left_y=WALK), 2.2)]),
    Scene("into an invisible wall", _start(50, -47, 180), [(PadState(left_y=WALK), 2.0)]),
    Scene("the world's edge, on the right", _start(-60, 98, 90), [(PadState(left_x=WALK), 1.6)]),
    Scene("talking to Orin", _start(5.0, 10.4, -54),
          [(A, 0.1), (PadState(), 2.2), (A, 0.1), (PadState(), 2.2), (A, 0.1), (PadState(), 0.6)]),
    Scene("pulling the pier lever", _start(75.5, 2.6, 0), [(A, 0.1), (PadState(), 1.6)]),
    Scene("the bell, ahead to the left", _start(0, 5, 0), [(PadState(), 3.4)], wait_s=BELL_PERIOD_S - 0.4),
]
# The WAV: cobbles into grass and a fence, the bell behind to the left.
WAV_SCENE = Scene("walk", _start(-22, -24, -90), [(PadState(left_y=WALK), 3.0)], wait_s=BELL_PERIOD_S - 1.2)


def record(world: BuiltinWorld, scene: Scene) -> np.ndarray:
    """Play a scene and return what the harness heard of it (int16 stereo)."""
    step = world.reset(scene.start)
    if scene.wait_s:
        step = world.hold(PadState(), scene.wait_s)
    for pad, seconds in scene.holds:
        before = step.tick
        step = world.hold(pad, seconds)
        scene.pcm.append(world.audio_ticks(before + 1, step.tick).samples)
    return np.concatenate(scene.pcm)


def picture(world: BuiltinWorld, rate: int) -> np.ndarray:
    """The scenes side by side in two rows, each with its label above it, a frequency scale on the left."""
    import cv2

    tiles = []
    for scene in SCENES:
        image = spectrogram_image(record(world, scene), rate, height=200)
        strip = np.full((34, image.shape[1], 3), 255, np.uint8)
        for line, text in enumerate(_wrap(scene.label, max(8, image.shape[1] // 8))):
            cv2.putText(strip, text, (3, 13 + 14 * line), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (20, 20, 20), 1,
                        cv2.LINE_AA)
        tiles.append(np.vstack([strip, image]))
    half = len(tiles) // 2
    rows = [_row(tiles[:half]), _row(tiles[half:])]
    width = max(row.shape[1] for row in rows)
    rows = [np.pad(row, ((0, 8), (0, width - row.shape[1]), (0, 0)), constant_values=255) for row in rows]
    return np.vstack(rows)


def _row(tiles: list[np.ndarray]) -> np.ndarray:
    import cv2

    gap = np.full((tiles[0].shape[0], 4, 3), 255, np.uint8)
    body = np.hstack([part for tile in tiles for part in (tile, gap)][:-1])
    axis = np.full((body.shape[0], 46, 3), 255, np.uint8)
    for hz in (100, 300, 1000, 3000, 8000):
        row = 34 + int((1 - np.log(hz / 40) / np.log(8000 / 40)) * 199)
        cv2.putText(axis, f"{hz // 1000}k" if hz >= 1000 else str(hz), (4, row + 4), cv2.FONT_HERSHEY_SIMPLEX,
                    0.35, (20, 20, 20), 1, cv2.LINE_AA)
    return np.hstack([axis, body])


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line][:2]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    (args.out / "sounds").mkdir(parents=True, exist_ok=True)
    (args.out / "images").mkdir(parents=True, exist_ok=True)
    with BuiltinWorld.launch(renderer="software", width=320, height=180) as world:
        assert world.audio_info is not None
        rate = world.audio_info.rate
        write_wav(args.out / "sounds" / "walk.wav", rate, record(world, WAV_SCENE))
        image = picture(world, rate)
    from PIL import Image  # a 128-colour palette keeps the picture small (the colour ramp has few hues)

    Image.fromarray(image).quantize(128).save(args.out / "images" / "sound_spectrogram.png", optimize=True)
    print(f"wrote {args.out / 'sounds' / 'walk.wav'} and {args.out / 'images' / 'sound_spectrogram.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
