"""The world's sound: what the simulation makes audible, synthesized with numpy, tick by tick.

Its part of the world file, the `sound:` section, is core/world/sound_spec.py.

events    what a tick sounds like: where the ears are, and what happened (footfalls, bumps, voices, cues)
director  turns each tick of the simulation into those events
ground    what is underfoot (the surface a footstep sounds of)
dsp       building blocks: filtered noise, crackle, resonant modes, envelopes
impacts   footsteps (per surface) and bumps (per material)
voice     babbled voices, one per NPC
cues      the interactables' and the dialogue box's cues, and the bell
ambience  loops: stream, sea, fountain, gulls, market chatter
banks     all of these, made once when the world starts
bank_cache  the banks kept on disk (the user's cache folder), so a world starts without making them again
spatial   where a sound is heard from: distance, level and time difference between the ears
mixer     mixes every audible sound into stereo PCM for a run of ticks
engine    ties them to the world and writes the audio ring
"""
