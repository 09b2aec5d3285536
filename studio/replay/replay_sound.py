"""Replay's sound: the recorded sound played in step with playback at 1× (silent at other speeds), a short snippet
when the cursor moves to a step, and the sound pane (spectrogram up to the step, the step's levels)."""

from __future__ import annotations

from core.audio.columns import levels
from core.episode import Episode
from studio.audio_feeder import AudioFeeder, ClipSource, audio_output_problem
from studio.sound_marks import StepColumns, playable_stretch
from widgets.sound_pane import KEEP_COLUMNS, SoundPane

SNIPPET_S = 0.5  # of a single step's sound, played when the cursor moves to it
CAPTIONS = {"on": "", "off": "recorded with the game's sound off", "unavailable": "no sound recorded"}


class ReplaySound:
    def __init__(self) -> None:
        self.pane = SoundPane()
        self.speaker = AudioFeeder("replay", spectrum=False, with_output=audio_output_problem() is None)
        self.pane.sig_muted.connect(self.speaker.set_muted)
        self.pane.sig_volume.connect(self.speaker.set_volume)
        self.columns: StepColumns | None = None
        self.played = 0  # stretches handed to the speaker (tests: 1× plays, other speeds do not)

    def open(self, episode: Episode) -> None:
        """A newly opened episode: its spectrogram's scale, an empty pane, and why it has no sound if so."""
        self.columns = StepColumns(episode)
        if self.columns.maker is not None:
            self.pane.set_scale(self.columns.maker.columns_per_second, self.columns.maker.row_hz)
        self.pane.clear()
        self.pane.set_caption(CAPTIONS.get(episode.audio_state, ""))

    def silence(self) -> None:
        self.speaker.set_source(None)

    def play_from(self, episode: Episode | None, index: int | None) -> None:
        """The recorded sound from the step at `index` to the end, timed like playback (None: silence)."""
        stretch = playable_stretch(episode, index, len(episode) - 1) if episode is not None and index is not None \
            else None
        if stretch is None or not len(stretch[1]):
            self.silence()
            return
        self.speaker.start()
        self.speaker.set_source(ClipSource(*stretch))
        self.played += 1

    def play_snippet(self, episode: Episode, index: int) -> None:
        """One step's sound, at most SNIPPET_S of it: what the cursor moved to sounds like."""
        clip = episode.step_audio(index)
        if clip is None or not len(clip.samples):
            self.silence()
            return
        self.speaker.start()
        self.speaker.set_source(ClipSource(clip.rate, clip.samples[:int(SNIPPET_S * clip.rate)]))
        self.played += 1

    def show(self, episode: Episode | None, index: int) -> None:
        """The sound pane: the spectrogram of the seconds up to the end of the step, and the step's levels."""
        columns = self.columns.up_to(index, KEEP_COLUMNS) if self.columns is not None else None
        if columns is None or episode is None:
            self.pane.clear()
            return
        self.pane.show_columns(columns)
        clip = episode.step_audio(index)
        self.pane.set_levels(levels(clip.samples) if clip is not None else None)
        self.pane.set_caption(episode.audio_problem(index) or "")

    def close(self) -> None:
        self.speaker.close()
