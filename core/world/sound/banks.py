"""Every sound the world can make, synthesized once when it starts, from the world file and its seed.

Each piece has its own generator seeded from (world seed, a stable name), so adding a source or an NPC
does not change how the others sound, and the same world file always sounds the same.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from core.world.content import WorldSpec
from core.world.sound import dsp
from core.world.sound.ambience import LOOPS
from core.world.sound.cues import CUES, bell
from core.world.sound.impacts import MATERIALS, bump, footstep
from core.world.sound.voice import syllable_bank, traits_for
from core.world.sound_spec import SURFACES, BellSource

VARIANTS = 4  # footsteps and bumps of each kind, so that no two in a row are the same
# Loudness of each ambient kind at its reference distance (RMS, full scale 1; gulls: peak, being mostly silence).
LOOP_LEVEL = {"water": 0.022, "surf": 0.05, "fountain": 0.03, "gulls": 0.2, "chatter": 0.025}
FOOTSTEP_PEAK = 0.22
BUMP_PEAK = 0.55
VOICE_PEAK = 0.22
CUE_PEAK = 0.25
BELL_PEAK = 0.3


def stable_code(*names: object) -> int:
    """A number for a name that is the same in every process (Python's hash() is salted per process)."""
    return zlib.crc32("/".join(str(n) for n in names).encode())


def generator(seed: int, *names: object) -> np.random.Generator:
    return np.random.default_rng([seed, stable_code(*names)])


@dataclass
class Banks:
    rate: int
    footsteps: dict[str, list[np.ndarray]] = field(default_factory=dict[str, list[np.ndarray]])
    bumps: dict[str, list[np.ndarray]] = field(default_factory=dict[str, list[np.ndarray]])
    voices: dict[str, list[np.ndarray]] = field(default_factory=dict[str, list[np.ndarray]])  # NPC id -> syllables
    cues: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    loops: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])  # ambient source id -> loop
    strokes: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])  # bell source id -> one stroke


def build_banks(spec: WorldSpec) -> Banks:
    sound = spec.sound
    seed, rate = sound.seed, sound.rate
    banks = Banks(rate)
    steps_gain = np.float32(FOOTSTEP_PEAK * sound.footsteps.gain)
    for surface in SURFACES:
        timbre = sound.footsteps.timbre(surface)
        banks.footsteps[surface] = [footstep(generator(seed, "footstep", surface, i), rate, timbre) * steps_gain
                                    for i in range(VARIANTS)]
    bump_gain = np.float32(BUMP_PEAK * sound.bumps.gain)
    for material in MATERIALS:
        banks.bumps[material] = [bump(generator(seed, "bump", material, i), rate, material) * bump_gain
                                 for i in range(VARIANTS)]
    voice_gain = np.float32(VOICE_PEAK * sound.voices.gain)
    for npc in spec.npcs:
        traits = traits_for(npc, sound.voices.npcs.get(npc.id))
        banks.voices[npc.id] = [s * voice_gain for s in syllable_bank(generator(seed, "voice", npc.id), rate, traits)]
    cue_gain = CUE_PEAK * sound.cues.gain
    for name, make in CUES.items():
        cue = dsp.tail_faded(dsp.peak_normalized(make(generator(seed, "cue", name), rate)), rate)
        banks.cues[name] = (cue * cue_gain).astype(np.float32)
    for source in sound.sources:
        rng = generator(seed, "source", source.id)
        if isinstance(source, BellSource):
            banks.strokes[source.id] = bell(rng, rate, source.pitch_hz) * np.float32(BELL_PEAK * source.gain)
        else:
            loop = LOOPS[source.kind](rng, rate)
            level = LOOP_LEVEL[source.kind] * source.gain
            # gulls are mostly silence: their level is a peak, the others' an RMS
            shaped = dsp.peak_normalized(loop) if source.kind == "gulls" else dsp.unit_rms(loop)
            banks.loops[source.id] = (shaped * level).astype(np.float32)
    return banks
