"""Signal processing for game sound, numpy only: WAV files, spectrograms, onsets, interaural level.

At the bottom of core's layers: it knows nothing of games, worlds or agents, so an agent may use it to
listen (core.agents may import it) and the world may use it to make sound.
"""
