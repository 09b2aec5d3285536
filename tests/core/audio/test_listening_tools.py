"""core/audio: WAV files that other players open, and an ear for sudden low thuds that ignores the rest."""

from __future__ import annotations

import wave

import numpy as np

from core.audio.onsets import detect_bumps
from core.audio.picture import spectrogram_image
from core.audio.wav import read_wav, wav_bytes, write_wav

RATE = 24000


def test_a_wav_file_holds_exactly_the_samples(tmp_path):
    pcm = np.random.default_rng(1).integers(-32768, 32767, (RATE // 2, 2)).astype(np.int16)
    write_wav(tmp_path / "x.wav", RATE, pcm)
    with wave.open(str(tmp_path / "x.wav")) as standard:  # any player's view of it
        assert (standard.getnchannels(), standard.getframerate(), standard.getsampwidth()) == (2, RATE, 2)
    rate, back = read_wav(tmp_path / "x.wav")
    assert rate == RATE and np.array_equal(back, pcm)
    assert len(wav_bytes(RATE, pcm[:, 0])) == 44 + 2 * len(pcm)  # mono works too


def _thud(at_s: float, length: int) -> np.ndarray:
    t = np.arange(length) / RATE - at_s
    return np.where(t >= 0, np.sin(2 * np.pi * 100 * t) * np.exp(-np.maximum(t, 0) / 0.08), 0.0)


def test_sudden_low_thuds_are_found_and_clicks_hiss_and_tones_are_not():
    length = 4 * RATE
    rng = np.random.default_rng(2)
    sound = 0.01 * rng.standard_normal(length)  # hiss throughout
    for at in (0.5, 1.7, 2.1):
        sound += 0.3 * _thud(at, length)
    for at in (1.0, 2.8, 3.3):  # bright clicks: footsteps, not bumps
        start = int(at * RATE)
        sound[start:start + 200] += 0.5 * rng.standard_normal(200) * np.exp(-np.arange(200) / 40)
    t = np.arange(length) / RATE
    sound += np.where(t > 3.0, 0.2 * np.sin(2 * np.pi * 392 * t), 0.0)  # a bell-like tone sets in
    pcm = (np.stack([sound, sound], axis=1) * 32767).astype(np.int16)
    found = [round(onset.time_s, 2) for onset in detect_bumps(pcm, RATE)]
    assert len(found) == 3 and np.allclose(found, [0.5, 1.7, 2.1], atol=0.03), found


def test_a_spectrogram_picture_shows_a_tone_as_a_bright_line_where_it_belongs():
    t = np.arange(RATE) / RATE
    pcm = (np.sin(2 * np.pi * 1000 * t) * 8000).astype(np.int16)
    picture = spectrogram_image(pcm, RATE, max_hz=8000, height=200)
    assert picture.dtype == np.uint8 and picture.shape[0] == 200 and picture.shape[2] == 3
    brightest = int(np.argmax(picture.sum(axis=(1, 2))))
    row_hz = np.geomspace(40, 8000, 200)[::-1][brightest]  # top row is the highest frequency
    assert 900 < row_hz < 1100
