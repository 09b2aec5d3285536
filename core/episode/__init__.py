"""The episode model: typed step records, the episode's result, and the observable Episode the runner
fills, the recorder writes and every view reads (docs/episode-model.md)."""

from core.episode.load import load_episode
from core.episode.model import (
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

__all__ = ["Episode", "EpisodeEvent", "EpisodeResult", "FrameAppended", "InterventionRecord", "LabelsChanged",
           "ResultSet", "SamplesAppended", "StepAppended", "StepDecision", "StepRecord", "StepTotals", "load_episode",
           "mark_kinds"]
