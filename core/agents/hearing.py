"""What an agent hears: the sound of its last step, as an audio clip or as a spectrogram picture.

`--audio clip` sends the step's sound itself (a WAV) to models that take audio; `--audio spectrogram` draws
it as one more image any VLM can read: a stereo log-mel spectrogram, the left ear above the right, with a
time axis. The picture's scale is absolute (dB below full scale), so silence is dark and a loud bump is
bright whatever else the step held: a model can compare one step's picture with the next.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import cv2
import numpy as np

from core.audio.clip import AudioClip
from core.audio.picture import colorize
from core.audio.spectrum import spectra, to_db
from core.audio.wav import wav_bytes

AUDIO_MODES: Final = ("none", "clip", "spectrogram")
MEL_BANDS = 64
LOW_HZ, HIGH_HZ = 40.0, 8000.0
# dB of full-scale power per mel band, darkest to brightest (in the town: ambience about -37, footsteps -14)
FLOOR_DB, CEILING_DB = -75.0, 0.0
PICTURE_WIDTH, PICTURE_HEIGHT = 640, 300

SPECTROGRAM_SENTENCE = (
    "The last image is what you heard during your last action, as a spectrogram: time runs left to right, the "
    "left ear is the upper half and the right ear the lower half, low pitches at the bottom of each half, and "
    "brighter is louder (a sudden bright column across many pitches is a bump or thud; louder in one ear means "
    "the sound came from that side).")
CLIP_SENTENCE = "The attached audio clip is what you heard during your last action (stereo: left and right ear)."
NOTHING_HEARD = "You have not heard anything yet: this is your first step."
NO_SOUND = "No sound reached you from your last action: the game's sound is unavailable."


def _mel(hz: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + hz / 700.0)


@lru_cache(maxsize=8)
def mel_filterbank(rate: int, window: int, bands: int = MEL_BANDS, low_hz: float = LOW_HZ,
                   high_hz: float = HIGH_HZ) -> np.ndarray:
    """(bands, window // 2 + 1) triangular filters evenly spaced on the mel scale."""
    high_hz = min(high_hz, rate / 2)
    freqs = np.fft.rfftfreq(window, 1.0 / rate)
    edges_mel = np.linspace(_mel(np.array(low_hz)), _mel(np.array(high_hz)), bands + 2)
    edges = 700.0 * (10 ** (edges_mel / 2595.0) - 1.0)
    bank = np.zeros((bands, len(freqs)))
    for band in range(bands):
        low, centre, high = edges[band], edges[band + 1], edges[band + 2]
        rising = (freqs - low) / max(centre - low, 1e-9)
        falling = (high - freqs) / max(high - centre, 1e-9)
        bank[band] = np.clip(np.minimum(rising, falling), 0.0, None)
        if not bank[band].any():  # narrower than a bin at this resolution: take the nearest bin
            bank[band, int(np.argmin(np.abs(freqs - centre)))] = 1.0
    return bank


def stereo_log_mel(clip: AudioClip, window: int = 1024, hop: int = 240) -> np.ndarray:
    """(channels, bands, frames) dB of full-scale power in each mel band, every `hop` samples."""
    spec = spectra(clip.samples, clip.rate, window, hop)
    bank = mel_filterbank(clip.rate, window)
    return to_db(np.swapaxes(spec.power @ bank.T, 1, 2))  # a matrix product (BLAS), not einsum


def _label(image: np.ndarray, text: str, at: tuple[int, int], scale: float = 0.45) -> None:
    cv2.putText(image, text, at, cv2.FONT_HERSHEY_SIMPLEX, scale, (235, 235, 235), 1, cv2.LINE_AA)


def spectrogram_picture(clip: AudioClip, width: int = PICTURE_WIDTH, height: int = PICTURE_HEIGHT) -> np.ndarray:
    """The step's sound as an RGB uint8 picture: left ear above, right ear below, a time axis in seconds."""
    samples = clip.samples if clip.samples.ndim == 2 else clip.samples[:, None]
    if samples.shape[1] == 1:
        samples = np.repeat(samples, 2, axis=1)
    db = stereo_log_mel(AudioClip(clip.rate, samples[:, :2]))
    margin_left, margin_bottom, gap = 28, 26, 4
    plot_w, panel_h = width - margin_left - 6, (height - margin_bottom - gap - 4) // 2
    picture = np.full((height, width, 3), 24, np.uint8)
    scaled = (db - FLOOR_DB) / (CEILING_DB - FLOOR_DB)
    for channel, (name, top) in enumerate((("L", 4), ("R", 4 + panel_h + gap))):
        panel = colorize(scaled[channel])[::-1]  # low pitches at the bottom
        panel = cv2.resize(panel, (plot_w, panel_h), interpolation=cv2.INTER_NEAREST)
        picture[top:top + panel_h, margin_left:margin_left + plot_w] = panel
        _label(picture, name, (8, top + panel_h // 2 + 6), 0.6)
    seconds = len(samples) / clip.rate if clip.rate else 0.0
    axis_y = height - margin_bottom + 4
    step = next((s for s in (0.1, 0.25, 0.5, 1.0, 2.0, 5.0) if seconds / s <= 6), 10.0)
    tick = 0.0
    while seconds > 0 and tick <= seconds + 1e-9:
        x = margin_left + round(tick / seconds * (plot_w - 1))
        cv2.line(picture, (x, axis_y - 4), (x, axis_y), (200, 200, 200), 1)
        _label(picture, f"{tick:g}", (min(x - 6, width - 30), axis_y + 13), 0.4)
        tick += step
    _label(picture, "s", (width - 12, axis_y + 13), 0.4)
    return picture


def clip_wav(clip: AudioClip) -> bytes:
    """The step's sound as a WAV file, for models that take audio."""
    return wav_bytes(clip.rate, clip.samples)
