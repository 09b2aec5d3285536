"""The world's sound, made in this process from the real rules and the real town: what a player would hear.

Each test drives the Simulation and SoundEngine the world process runs (tests/core/world/sound_rig.py) and
judges only the PCM that reaches the audio ring, using the director's events to know what happened."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from core.audio.onsets import band_onsets
from core.audio.spectrum import spectra
from core.game.pad import Button, PadState
from core.world.sound.events import Bump, Cue, Footstep
from core.world.sound.spatial import MAX_ITD_S
from tests.core.world.sound_rig import SoundRig, sound_rig, town

WALK = PadState(left_y=1.0)
STILL = PadState()
A = PadState(buttons=frozenset({Button.A}))


@pytest.fixture
def rig(tmp_path: Path):
    made = sound_rig(tmp_path)
    yield made
    made.close()


def _band_power(pcm: np.ndarray, rate: int, low: float, high: float) -> np.ndarray:
    """(ears, frames) power in a band, every 10 ms."""
    return spectra(pcm, rate).band(low, high)


def test_how_the_ticks_are_grouped_does_not_change_a_single_sample(tmp_path):
    """Real time mixes tick by tick, lockstep a step at a time: both give the same sound, bit for bit, with
    footsteps, bumps, turning, the bell and the ambience all in it."""
    script = [(STILL, 570), (WALK, 40), (PadState(left_y=1.0, right_x=0.6), 40), (PadState(left_x=1.0), 30),
              (PadState(right_x=-1.0), 20), (STILL, 30)]
    heard = []
    for block in (1, 15, 64):
        (tmp_path / str(block)).mkdir()
        rig = sound_rig(tmp_path / str(block))
        rig.start(-5, -56, 90)  # the park fence is a metre away to the west, the bell strikes at 20 s
        heard.append(rig.play(script, block))
        kinds = {type(e) for e in rig.events}
        rig.close()
    assert {Footstep, Bump} <= kinds
    assert np.array_equal(heard[0], heard[1]) and np.array_equal(heard[0], heard[2])
    assert np.abs(heard[0]).max() > 1000  # and it is not silence


def test_mixing_on_a_thread_of_its_own_or_in_line_gives_the_same_samples(tmp_path):
    """A machine with cores to spare mixes beside the renderer, a small one in line: the sound is the same."""
    script = [(WALK, 45), (PadState(left_y=1.0, right_x=0.6), 30), (STILL, 15)]
    heard = []
    for threaded in (True, False):
        (tmp_path / str(threaded)).mkdir()
        rig = sound_rig(tmp_path / str(threaded), mixing_thread=threaded)
        rig.start(-5, -56, 90)
        heard.append(rig.play(script))
        rig.close()
    assert np.array_equal(heard[0], heard[1])
    assert np.abs(heard[0]).max() > 1000


def test_the_same_inputs_sound_the_same_after_a_reset(rig):
    rig.start(0, -9, 180)
    first = rig.play([(WALK, 45), (PadState(left_x=-1.0, right_x=0.5), 30)])
    rig.start(0, -9, 180)
    again = rig.play([(WALK, 45), (PadState(left_x=-1.0, right_x=0.5), 30)])
    assert np.array_equal(first, again)


# Straight walks that stay on one surface each (x, y, heading).
SURFACES = {"asphalt": (0, -35, 180), "cobble": (10, -30, -90), "grass": (-6, 40, 0), "dirt": (-60.5, 8, 8.7),
            "wood": (-50, 4, -90), "sand": (-49.3, -9, 0)}


def _step_spectra(rig: SoundRig, surface: str) -> list[np.ndarray]:
    x, y, heading = SURFACES[surface]
    rig.start(x, y, heading)
    pcm = rig.hold(WALK, 45)
    first_tick = rig.simulation.state.tick - 45 + 1
    steps = [e for e in rig.events if isinstance(e, Footstep)]
    assert len(steps) >= 4 and {e.surface for e in steps} == {surface}
    mono = pcm.astype(float).mean(axis=1)
    shapes = []
    for step in steps:
        at = (step.tick - first_tick) * rig.per_tick + step.offset
        if at + 2048 > len(mono):
            continue
        window = mono[at:at + 2048] * np.hanning(2048)
        power = np.abs(np.fft.rfft(window)) ** 2
        edges = np.geomspace(200, 9000, 19)
        bins = np.fft.rfftfreq(2048, 1 / rig.rate)
        bands = np.array([power[(bins >= lo) & (bins < hi)].sum() for lo, hi in itertools.pairwise(edges)])
        shapes.append(10 * np.log10(bands / bands.sum() + 1e-12))  # the spectrum's shape, not its level
    return shapes


def test_each_ground_surface_has_footsteps_of_its_own(rig):
    """Told apart by ear: every footfall's spectrum is nearest to the other footfalls on its own surface."""
    heard = {surface: _step_spectra(rig, surface) for surface in SURFACES}
    right = total = 0
    for surface, shapes in heard.items():
        for index, shape in enumerate(shapes):
            means = {other: np.mean([s for i, s in enumerate(group) if (other, i) != (surface, index)], axis=0)
                     for other, group in heard.items()}
            nearest = min(means, key=lambda other: np.linalg.norm(shape - means[other]))
            right += nearest == surface
            total += 1
    assert right / total >= 0.9, f"only {right} of {total} footfalls sound like their own surface"


def _first_bump_window(rig: SoundRig, pcm: np.ndarray, first_tick: int) -> np.ndarray:
    bump = next(e for e in rig.events if isinstance(e, Bump))
    at = (bump.tick - first_tick) * rig.per_tick + bump.offset
    return pcm[at:at + int(0.06 * rig.rate)].astype(float)


@pytest.mark.parametrize(("yaw", "stick", "louder"), [(90.0, 1.0, "right"), (-90.0, -1.0, "left")])
def test_a_bump_is_heard_from_the_side_it_happened_on(rig, yaw, stick, louder):
    """Walking sideways into the world's north edge: the ear on that side hears it louder and first."""
    rig.start(-60, 98.5, yaw)  # facing west (yaw 90) the edge is on the right; facing east, on the left
    pcm = rig.hold(PadState(left_x=stick), 30)
    window = _first_bump_window(rig, pcm, rig.simulation.state.tick - 30 + 1)
    left, right = np.sqrt((window ** 2).mean(axis=0))
    level_db = 20 * np.log10(right / left)
    assert level_db > 6 if louder == "right" else level_db < -6
    lags = np.arange(-40, 41)
    correlation = [np.dot(window[40:-40, 0], np.roll(window[:, 1], lag)[40:-40]) for lag in lags]
    lag = lags[int(np.argmax(correlation))]  # > 0: the left ear hears what the right heard lag samples before
    assert 0 < abs(lag) <= MAX_ITD_S * rig.rate + 1 and (lag > 0) == (louder == "right")


def test_turning_the_camera_turns_the_sound(rig):
    """Facing north just east of the fountain it is on the left; turned round, on the right."""
    rig.start(6, 0, 0)
    before = _band_power(rig.hold(STILL, 30), rig.rate, 1000, 6000).mean(axis=1)
    rig.hold(PadState(right_x=1.0), 45)  # 180 degrees at the camera's 120 degrees per second
    after = _band_power(rig.hold(STILL, 30), rig.rate, 1000, 6000).mean(axis=1)
    assert 10 * np.log10(before[1] / before[0]) < -4 and 10 * np.log10(after[1] / after[0]) > 4


def test_the_bell_strikes_every_period_of_game_time(tmp_path):
    spec = town()
    bell = next(s for s in spec.sound.sources if s.kind == "bell")
    only_bell = spec.model_copy(update={"sound": spec.sound.model_copy(update={"sources": [bell]})})
    rig = sound_rig(tmp_path, only_bell)
    rig.start(10, 20, 90)
    pcm = rig.hold(STILL, int(2.2 * bell.period_s * 30))
    rig.close()
    strokes = [onset.time_s for onset in band_onsets(pcm, rig.rate, 1500, 7000, rise_db=10.0)]  # the clapper
    expected = [bell.period_s * ring + bell.interval_s * stroke for ring in (1, 2) for stroke in range(bell.strikes)]
    assert len(strokes) == len(expected) and np.allclose(strokes, expected, atol=0.1)


def test_tick_boundaries_make_no_clicks_while_the_camera_swings(tmp_path):
    """The bell alone, rung while the camera swings round at full speed: its sound stays as smooth at the
    seams between ticks as within them (gains glide across each tick, they never jump)."""
    spec = town()
    bell = next(s for s in spec.sound.sources if s.kind == "bell")
    only_bell = spec.model_copy(update={"sound": spec.sound.model_copy(update={"sources": [bell]})})
    rig = sound_rig(tmp_path, only_bell)
    rig.start(-3, 27, 0)  # ten metres east of the tower
    rig.hold(STILL, int(bell.period_s * 30) + 6)  # past the clapper's noise
    pcm = rig.hold(PadState(right_x=1.0), 60).astype(float)
    rig.close()
    rough = np.abs(np.diff(pcm, n=2, axis=0)).max(axis=1)  # a click is a spike in the second difference
    seams = np.arange(1, len(pcm) // rig.per_tick) * rig.per_tick - 1  # rough[i] is centred on sample i + 1
    assert rough[seams].max() <= np.percentile(rough, 99.9)


def test_an_npc_speaks_in_a_voice_of_its_own_only_while_its_dialogue_is_open(rig):
    """Gil the guard is tall and low-voiced, Kai small and high: their babble's pitch says who is talking."""
    pitches = {}
    for who, (x, y, heading) in {"guard": (4.5, -88.6, 180), "kid": (-37.5, -58.8, 160)}.items():
        rig.start(x, y, heading)
        before = _voice_level(rig.hold(STILL, 15), rig.rate)
        rig.hold(A, 2)
        assert rig.simulation.state.dialogue_target >= 0, f"{who}'s dialogue did not open"
        talking = rig.hold(STILL, 30)
        rig.hold(A, 2), rig.hold(STILL, 2), rig.hold(A, 2)  # through its two lines: closed
        assert rig.simulation.state.dialogue_target < 0
        rig.hold(STILL, 10)  # past the dialogue box's closing blip
        after = _voice_level(rig.hold(STILL, 30), rig.rate)
        assert _voice_level(talking, rig.rate) > 10 * max(before, after)
        pitches[who] = _pitch(talking.astype(float).mean(axis=1), rig.rate)
    assert pitches["guard"] < 150 < pitches["kid"]


def _voice_level(pcm: np.ndarray, rate: int) -> float:
    return float(_band_power(pcm, rate, 150, 3000).mean())


def _pitch(mono: np.ndarray, rate: int) -> float:
    """The median pitch of the loud 40 ms frames, from the cepstrum (the spacing of the voice's harmonics)."""
    frame, shortest, longest = int(0.04 * rate), int(rate / 400), int(rate / 70)
    loudness = np.sqrt((mono ** 2).mean())
    found = []
    for start in range(0, len(mono) - frame, frame):
        piece = mono[start:start + frame]
        if np.sqrt((piece ** 2).mean()) < loudness:
            continue
        cepstrum = np.fft.irfft(np.log(np.abs(np.fft.rfft(piece * np.hanning(frame))) + 1e-9))
        found.append(rate / (shortest + int(np.argmax(cepstrum[shortest:longest]))))
    return float(np.median(found))


def test_the_dialogue_box_is_heard_wherever_the_character_is(tmp_path):
    """Its blips sound inside the head: as loud at the south gate, 84 m from the middle of town, as anywhere."""
    heard = []
    for with_cue in (False, True):
        (tmp_path / str(with_cue)).mkdir()
        rig = sound_rig(tmp_path / str(with_cue))
        rig.start(0, -84, 0)
        rig.hold(STILL, 15)
        if with_cue:
            tick = rig.simulation.state.tick + 1
            rig.engine.mixer.add([Cue(tick, "dialogue_open", None)])  # as the director hands it over
        heard.append(rig.hold(STILL, 15).astype(float))
        rig.close()
    blip = heard[1] - heard[0]  # the same ambience in both: what is left is the cue
    assert np.abs(blip).max() > 1000
    left, right = np.sqrt((blip ** 2).mean(axis=0))
    assert abs(left - right) < 0.01 * max(left, right)  # in the middle of the head
