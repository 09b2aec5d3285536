"""A spectrogram as a picture (RGB uint8, time left to right, low frequencies at the bottom), numpy only."""

from __future__ import annotations

import numpy as np

from core.audio.spectrum import spectrogram_db

# A dark-to-bright colour ramp (black, purple, red, orange, pale yellow), like matplotlib's "magma".
_RAMP = np.array([[0, 0, 4], [59, 15, 112], [140, 41, 129], [222, 73, 104], [254, 159, 109], [252, 253, 191]],
                 float)


def colorize(values: np.ndarray) -> np.ndarray:
    """Values in [0, 1] to RGB uint8 along the ramp."""
    position = np.clip(values, 0.0, 1.0) * (len(_RAMP) - 1)
    low = np.minimum(position.astype(int), len(_RAMP) - 2)
    share = (position - low)[..., None]
    return (_RAMP[low] * (1 - share) + _RAMP[low + 1] * share).astype(np.uint8)


def spectrogram_image(pcm: np.ndarray, rate: int, max_hz: float = 8000.0, range_db: float = 70.0,
                      log_frequency: bool = True, height: int = 256) -> np.ndarray:
    """(height, frames, 3) uint8: one column per 10 ms frame, rows from max_hz (top) down to 40 Hz (bottom),
    on a logarithmic frequency axis by default (footsteps, thuds and the bell's hum all show)."""
    db, _, freqs = spectrogram_db(pcm, rate)
    rows = np.geomspace(40.0, max_hz, height) if log_frequency else np.linspace(0.0, max_hz, height)
    # each row takes the strongest bin it covers, so narrow partials stay visible when rows are wide
    edges = np.concatenate([[rows[0]], np.sqrt(rows[1:] * rows[:-1]), [rows[-1]]])
    picture = np.empty((height, db.shape[1]))
    for row in range(height):
        inside = (freqs >= edges[row]) & (freqs <= edges[row + 1])
        picture[row] = db[inside].max(axis=0) if inside.any() else db[np.argmin(np.abs(freqs - rows[row]))]
    top = picture.max()
    return colorize((picture - (top - range_db)) / range_db)[::-1]
