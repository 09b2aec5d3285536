"""Proof that the sound carries information (issue 22.5), on the real world process, through the harness's API.

The world is launched with its TEST-ONLY truth channel on (POKEGYM_TEST_SOUND_TRUTH=1: it appends every sound
event to sound_truth.jsonl in its runtime folder). The tests compare what that file says happened with what
can be heard in the PCM from BuiltinWorld.audio_ticks, and nothing else: the detectors are core/audio's."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.audio.onsets import band_onsets, detect_bumps
from core.audio.spectrum import spectra
from core.game.builtin import BuiltinWorld
from core.game.pad import Button, PadState
from core.paths import DEFAULT_WORLD
from core.world.content import load_world
from core.world.sound.engine import TRUTH_ENV, TRUTH_FILE
from core.world.sound.spatial import MAX_ILD_DB

WALK, BACK, STILL = PadState(left_y=1.0), PadState(left_y=-1.0), PadState()
RUN = PadState(left_y=1.0, buttons=frozenset({Button.B}))
MATCH_TICKS = 2  # a detected bump within this many ticks of a real one is that bump


class Heard:
    """A world with its truth channel on; each scene returns its PCM and the events it really had."""

    def __init__(self, world: BuiltinWorld) -> None:
        self.world = world
        self.truth = Path(world._ring.path).parent / TRUTH_FILE
        assert world.audio_info is not None
        self.rate, self.per_tick = world.audio_info.rate, world.audio_info.samples_per_tick

    def scene(self, start: dict[str, Any], holds: list[tuple[PadState, float]],
              wait_s: float = 0.0) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Reset to start, wait, then the holds; returns the PCM of the holds and their events, each with
        `sample`: where in that PCM it begins."""
        step = self.world.reset(start)
        if wait_s:
            step = self.world.hold(STILL, wait_s)
        first, seen = step.tick + 1, self.truth.stat().st_size
        pcm = []
        for pad, seconds in holds:
            before, step = step, self.world.hold(pad, seconds)
            pcm.append(self.world.audio_ticks(before.tick + 1, step.tick).samples)
        with self.truth.open(encoding="utf-8") as handle:
            handle.seek(seen)
            events = [json.loads(line) for line in handle if line.strip()]
        for event in events:
            if "tick" in event and "offset" in event:
                event["sample"] = (event["tick"] - first) * self.per_tick + event["offset"]
        return np.concatenate(pcm), events


@pytest.fixture(scope="module")
def heard() -> Iterator[Heard]:
    os.environ[TRUTH_ENV] = "1"
    try:
        world = BuiltinWorld.launch(renderer="software", width=160, height=90)
    finally:
        del os.environ[TRUTH_ENV]
    with world:
        yield Heard(world)


def start(x: float, y: float, facing: float, yaw: float | None = None) -> dict[str, Any]:
    return {"pos": [x, y], "facing": facing, "camera_yaw": facing if yaw is None else yaw, "camera_pitch": -12,
            "flags": []}


# A walk along fences, walls, hedges, railings, invisible walls and the world's edge: up to each one, pressing
# against it, backing off, running into it, sliding along it at 45 degrees, pushing gently.
PRESSING = [(WALK, 1.7), (STILL, 0.3), (BACK, 0.5), (RUN, 0.9), (PadState(left_x=0.7, left_y=0.7), 1.1),
            (STILL, 0.3), (BACK, 0.4), (PadState(left_x=-0.6, left_y=0.6), 0.9), (PadState(left_y=0.45), 1.0)]
OBSTACLES = {
    "park fence": start(-4, -70, 90), "bakery alley fence": start(-16, -24.5, 180),
    "farm fence": start(-82, 30, 90), "school yard wall": start(-11, 37, 90), "mart": start(22, -21, 0),
    "garden hedge": start(-26, -80, 90), "harbour railing": start(73, -25, -90),
    "construction site (invisible)": start(50, -46.5, 180), "cliff (invisible)": start(73, 66, -90),
    "north edge": start(-30, 96, 0), "west edge": start(-96, -70, 90), "south edge": start(30, -96, 180),
}


def test_the_bump_detector_finds_every_bump_from_the_sound_alone(heard):
    """>= 95% of detected bumps are real and >= 95% of real ones are detected, invisible walls included,
    with footsteps on several surfaces, the sea, the stream and a stroke of the bell in the mix."""
    found = real = right = 0
    misses = []
    for name, where in OBSTACLES.items():
        wait = 19.0 if name == "mart" else 0.0  # the bell strikes 1 s into this one
        pcm, events = heard.scene(where, PRESSING, wait_s=wait)
        truth = [e["sample"] for e in events if e["kind"] == "bump"]
        assert truth, f"nothing was bumped into at the {name}"
        detected = [onset.sample for onset in detect_bumps(pcm, heard.rate)]
        unmatched = list(truth)
        for sample in detected:
            near = [t for t in unmatched if abs(t - sample) <= MATCH_TICKS * heard.per_tick]
            if near:
                unmatched.remove(near[0])
                right += 1
        found, real = found + len(detected), real + len(truth)
        if unmatched or len(detected) > len(truth) - len(unmatched):
            misses.append(f"{name}: real {[round(t / heard.rate, 2) for t in truth]}, "
                          f"heard {[round(s / heard.rate, 2) for s in detected]}")
    precision, recall = right / found, right / real
    assert real >= 80
    assert precision >= 0.95 and recall >= 0.95, f"precision {precision:.3f}, recall {recall:.3f}: {misses}"


def _bell_power(pcm: np.ndarray, rate: int, pitch_hz: float) -> np.ndarray:
    """(ears, frames) power at the bell's prime, tierce, quint and nominal."""
    spec = spectra(pcm, rate, window=2048)
    keep = np.zeros(len(spec.freqs), bool)
    for ratio in (1.0, 1.19, 1.5, 2.0):
        keep |= np.abs(spec.freqs - pitch_hz * ratio) <= 15
    return spec.power[:, :, keep].sum(axis=2)


def _bell_ild(heard: Heard, where: dict[str, Any], period_s: float, pitch_hz: float) -> float:
    """The interaural level difference (dB, right over left) of the bell's first stroke, its own sound only:
    what the ears hear during the stroke less what they heard just before it."""
    pcm, _ = heard.scene(where, [(STILL, 2.0)], wait_s=period_s - 1.0)
    power = _bell_power(pcm, heard.rate, pitch_hz)
    frames = power.shape[1]
    before = power[:, :frames // 2 - 10].mean(axis=1)
    during = power[:, frames // 2 + 2:frames // 2 + 60].mean(axis=1)
    bell = np.maximum(during - before, 1e-20)
    return float(10 * np.log10(bell[1] / bell[0]))


def test_the_bell_points_to_the_clock_tower_from_around_town(heard):
    """Listening with the camera facing north, then west: the level difference of the bell's stroke gives
    the tower's bearing within 30 degrees from eight places around town."""
    spec = load_world(DEFAULT_WORLD)
    bell = next(s for s in spec.sound.sources if s.kind == "bell")
    tower = next(s.pos for s in spec.structures if s.type == "clock_tower")
    places = [(30, 3), (0, -40), (-40, -22), (-58, 30), (20, 60), (40, -30), (-30, 62), (60, -5)]
    errors = {}
    for x, y in places:
        # facing north (heading 0) the right ear points east; facing west (heading 90) it points north
        east = _bell_ild(heard, start(x, y, 0), bell.period_s, bell.pitch_hz) / MAX_ILD_DB
        north = _bell_ild(heard, start(x, y, 90), bell.period_s, bell.pitch_hz) / MAX_ILD_DB
        heard_bearing = math.degrees(math.atan2(north, east))
        true_bearing = math.degrees(math.atan2(tower[1] - y, tower[0] - x))
        errors[(x, y)] = abs((heard_bearing - true_bearing + 180) % 360 - 180)
    assert sum(error <= 30 for error in errors.values()) >= 6, errors


def test_footsteps_stop_within_one_stride_when_the_character_is_blocked(heard):
    """Walking head-on into the park fence: footfalls before, then only bumps (in the events and in the
    sound: every high-band onset after one stride belongs to a bump)."""
    spec = load_world(DEFAULT_WORLD)
    stride_ticks = math.ceil(spec.sound.footsteps.stride_m / spec.character.walk_speed * spec.tick_hz)
    pcm, events = heard.scene(start(-2, -66, 90), [(WALK, 4.0)])
    steps = [e["sample"] for e in events if e["kind"] == "footstep"]
    contact = min(e["sample"] for e in events if e["kind"] == "bump")
    assert len(steps) >= 4 and max(steps) <= contact + stride_ticks * heard.per_tick
    bumps = [onset.sample for onset in detect_bumps(pcm, heard.rate)]
    high = [onset.sample for onset in band_onsets(pcm, heard.rate, 1500, 8000, rise_db=8.0)]
    before = [s for s in high if s < contact - heard.per_tick]
    after = [s for s in high if s > contact + stride_ticks * heard.per_tick]
    assert len(before) >= 3  # the footfalls were heard
    assert all(any(abs(s - b) <= MATCH_TICKS * heard.per_tick for b in bumps) for s in after), (after, bumps)
