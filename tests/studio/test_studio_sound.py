"""The game's sound in the studio (pytest-qt, offscreen, where there is no audio output): the Live view draws
the world's sound as it plays and says once that it cannot play it; the speaker's mute and volume are kept
in the settings; Replay plays a recording's sound at 1× and for a single step, never at other speeds, marks
the steps whose sound holds a bump, and plays everything but a step whose sound is damaged."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from core.audio.clip import AudioClip
from core.audio.columns import ColumnMaker
from core.episode import load_episode
from core.game.pad import PadState
from core.recording.reader import EpisodeReader
from studio.audio_feeder import Chunk, _FeedState
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.sound_marks import bump_positions, playable_stretch, step_has_bump
from tests.damaged_files import STEPS, flip_chunk, record_episode

RATE = 24000


def thud(seconds: float = 0.25, at: float = 0.1) -> np.ndarray:
    """Quiet high hiss with a loud low thud (90 Hz, decaying) `at` seconds in: what the world's bump sounds like."""
    rng = np.random.default_rng(1)
    t = np.arange(int(seconds * RATE)) / RATE
    hiss = rng.normal(0, 60, len(t))
    body = np.where(t >= at, 12000 * np.sin(2 * np.pi * 90 * (t - at)) * np.exp(-(t - at) * 25), 0.0)
    mono = (hiss + body).astype(np.int16)
    return np.stack([mono, mono], axis=1)


def test_spectrogram_columns_do_not_depend_on_how_the_sound_arrives():
    pcm = thud(1.0)
    maker = ColumnMaker(RATE, 2)
    whole = maker.whole(pcm)
    pieces = np.concatenate([maker.feed(pcm[i:i + 811]) for i in range(0, len(pcm), 811)], axis=2)
    assert np.array_equal(whole, pieces) and whole.shape == (2, 80, 1 + (RATE - 512) // 240)
    low = np.searchsorted(maker.row_hz, 90)
    during = whole[0, :, 12].astype(int)  # 0.12 s in: the thud has begun
    assert during[low - 2:low + 3].max() > during[60:].max() + 60  # it is low, and bright


def test_a_bump_is_found_in_the_step_it_begins_in():
    quiet = AudioClip(RATE, thud(0.25, at=1.0))  # no thud within these 0.25 s
    assert step_has_bump(AudioClip(RATE, thud()), quiet)
    assert not step_has_bump(quiet, quiet)


def test_live_sound_never_waits_longer_than_the_backlog():
    state = _FeedState()
    state.fmt = (RATE, 2)
    for _ in range(10):  # a lockstep world running far faster than real time: 2.5 s at once
        state.pending.append(Chunk(np.zeros((RATE // 4, 2), np.int16)))
    dropped = state.cap_backlog(0.3)
    assert dropped == int(2.5 * RATE) - int(0.3 * RATE)
    assert sum(len(c.pcm) for c in state.pending) - state.offset // 4 == int(0.3 * RATE)


def test_a_backlog_that_never_drains_is_cut_back_but_a_steps_burst_is_not():
    state = _FeedState()
    state.fmt = (RATE, 2)
    state.pending.append(Chunk(np.zeros((RATE // 4, 2), np.int16)))  # a lockstep step's burst...
    state.catch_up(0.03, window_s=1.0)
    state.pending.clear()  # ...drains before the window closes: nothing is cut
    state.catch_up(0.03, window_s=1.0)
    state.window_start -= 2.0
    assert state.catch_up(0.03, window_s=1.0) == 0
    state.pending.append(Chunk(np.zeros((RATE // 5, 2), np.int16)))  # 0.2 s that stays all through a window
    state.catch_up(0.03, window_s=1.0)
    state.window_start -= 2.0
    assert state.catch_up(0.03, window_s=1.0) == RATE // 5 - int(0.03 * RATE)
    assert state.waiting() == int(0.03 * RATE)


def test_live_draws_the_worlds_sound_and_says_once_there_is_no_audio_output(live_window, qtbot):
    live = live_window.live
    source = live.sound_source
    for _ in range(4):  # lockstep: the world sounds only while it steps; walk for a second
        live.host.hold(PadState(left_y=1.0), 0.25)  # queued on the drive thread
        qtbot.waitUntil(lambda: not live.host.driving, timeout=10_000)
        # each step's ticks reach the feeder before the next step: a starved feeder could skip them (too old to
        # play late), which this test is not about
        held = live.host.heard_game().audio_held()
        qtbot.waitUntil(lambda held=held: source.handed_to >= held.last, timeout=10_000)
    qtbot.waitUntil(lambda: live.sound.columns_shown > 80, timeout=20_000)  # the second's sound, drawn
    assert live.speaker.problem == "no audio output" and live.speaker.played_frames == 0
    assert live.sound_status.isVisible() and live.sound_status.text() == "no audio output"
    assert live.sound.caption.text().startswith("no audio output")
    assert live.speaker.levels is not None and max(live.speaker.levels.rms_db) > -80  # the ambience is heard
    assert source.ticks_read >= 30 and source.ticks_skipped == 0  # the whole walk's sound was handed on


def test_mute_and_volume_are_remembered(qtbot, settings_dir):
    first = MainWindow(LiveSession())
    qtbot.addWidget(first)
    first.live.sound.mute.setChecked(True)
    first.live.sound.volume.setValue(35)
    first.replay.sound.volume.setValue(60)
    assert first.live.speaker.muted and first.live.speaker.volume == pytest.approx(0.35)
    first.close()
    assert QSettings("PokeGym", "Studio").value("live/sound_muted") in (True, "true")
    second = MainWindow(LiveSession())
    qtbot.addWidget(second)
    assert second.live.sound.mute.isChecked() and second.live.speaker.muted
    assert second.live.sound.volume.value() == 35 and second.live.speaker.volume == pytest.approx(0.35)
    assert second.replay.sound.volume.value() == 60 and not second.replay.sound.mute.isChecked()
    second.close()


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return record_episode(tmp_path_factory.mktemp("sound") / "episode.h5")


@pytest.fixture
def window(replay_window):
    return replay_window


def open_episode(window, qtbot, path: Path) -> None:
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.replay.shown_index == 0, timeout=10_000)


def test_replay_plays_the_sound_at_1x_and_a_single_step_and_is_silent_otherwise(window, qtbot, recording):
    open_episode(window, qtbot, recording)
    replay = window.replay
    episode = replay.episode
    assert replay.audio_played == 0  # opening makes no sound
    assert replay.sound.columns_shown > 0 and replay.sound_status.text() == "no audio output"
    assert replay.panes.bump_marks == bump_positions(episode)
    assert replay.timeline.marks["bump"] == replay.panes.bump_marks
    replay.seek(3)  # a single step: its snippet
    assert replay.audio_played == 1
    replay.speed.setCurrentText("2×")
    replay.toggle_play()
    assert replay.audio_played == 1  # silent at 2×
    replay.toggle_play()
    replay.speed.setCurrentText("1×")
    replay.seek(0)
    played = replay.audio_played
    replay.toggle_play()  # 1×: the sound from the cursor on, timed like the pictures
    assert replay.audio_played == played + 1
    rate, pcm = playable_stretch(episode, 0, len(episode) - 1)
    hz = float(episode.metadata["tick_hz"])
    assert len(pcm) == sum(round((r.tick_after - r.tick_before) * rate / hz) for r in episode.steps())
    replay.speed.setCurrentText("4×")  # faster while playing: the sound stops
    assert replay.audio_played == played + 1
    replay.toggle_play()


def test_damaged_audio_shows_its_step_and_everything_else_plays(window, qtbot, recording, tmp_path):
    damaged = Path(shutil.copyfile(recording, tmp_path / "damaged.h5"))
    with EpisodeReader(recording) as reader:
        first_row = int(reader.audio_index()[2, 0])
    flip_chunk(damaged, "audio/pcm", (first_row, 0, 0))
    open_episode(window, qtbot, damaged)
    replay = window.replay
    replay.seek(2)
    qtbot.waitUntil(lambda: replay.shown_index == 2, timeout=10_000)
    assert "damaged audio at step 3" in replay.status_message.full_text()
    assert replay.sound.caption.text().startswith("damaged audio at step 3")
    original = load_episode(recording)
    rate, pcm = playable_stretch(replay.episode, 0, STEPS - 1)
    _, whole = playable_stretch(original, 0, STEPS - 1)
    step = [round((r.tick_after - r.tick_before) * rate / 30.0) for r in original.steps()]
    start, end = sum(step[:2]), sum(step[:3])
    assert not pcm[start:end].any()  # step 3 plays silent...
    assert np.array_equal(pcm[:start], whole[:start]) and np.array_equal(pcm[end:], whole[end:])  # ...the rest plays
    replay.seek(4)
    qtbot.waitUntil(lambda: replay.shown_index == 4, timeout=10_000)
    assert "damaged audio" not in replay.status_message.full_text()
