"""The episode model: typed step records, the episode's result, and the observable Episode the runner
fills, the recorder writes and every view reads (docs/episode-model.md)."""

from core.episode.load import EpisodeHeader, load_episode, read_header
from core.episode.model import (
    AudioAppended,
    Episode,
    EpisodeEvent,
    FrameAppended,
    LabelsChanged,
    ResultSet,
    SamplesAppended,
    StepAppended,
    StepTotals,
    mark_kinds,
)
from core.episode.records import EpisodeResult, InterventionRecord, StepDecision, StepRecord

__all__ = ["AudioAppended", "Episode", "EpisodeEvent", "EpisodeHeader", "EpisodeResult", "FrameAppended",
           "InterventionRecord", "LabelsChanged", "ResultSet", "SamplesAppended", "StepAppended", "StepDecision",
           "StepRecord", "StepTotals", "load_episode", "mark_kinds", "read_header"]
