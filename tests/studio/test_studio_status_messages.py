"""The Live view's sentences about the evaluator and errors, decided without Qt (studio/status_messages.py)."""

from __future__ import annotations

from pathlib import Path

from core.episode.records import EpisodeResult
from core.game.errors import GameDiedError, GameError
from studio.episode_messages import EpisodeEnd, describe_end
from studio.status_messages import describe_error, describe_evaluator, error_kind


def test_a_dead_world_is_known_by_its_exception_type_not_its_words():
    assert error_kind(GameDiedError("the game went away")) == "world_died"
    assert error_kind(GameError("the world process said no")) == "error"  # the words alone decide nothing
    assert "Restart world" in describe_error("the game went away\ndetails", "world_died").text
    assert describe_error("world process is busy", "error").text == "world process is busy"


def test_an_episode_ended_by_a_dead_world_offers_the_restart():
    text, error = describe_end(ended(EpisodeResult("q01", False, 4, "error", error="it died\ntrace"), "world_died"))
    assert error and "after 4 steps" in text and "Restart world" in text and "trace" not in text
    text, _ = describe_end(ended(EpisodeResult("q01", False, 2, "error", error="the agent failed")))
    assert "Restart world" not in text


def test_evaluator_states_become_sentences_once_per_change():
    failed = describe_evaluator("locked", {"state": "failed", "message": "scan timed out"}, True, False)
    assert failed is not None and failed.error and "scan timed out" in failed.text and "Restart world" in failed.text
    assert describe_evaluator("failed", {"state": "failed"}, True, True) is None  # unchanged: nothing new to say
    lost = describe_evaluator("locked", {"state": "lost"}, True, False)
    assert lost is not None and not lost.error and "rescans by itself" in lost.text
    assert describe_evaluator("locked", {"state": "scanning"}, False, False) is None  # no world: the keeper says why
    found = describe_evaluator("lost", {"state": "locked"}, True, True)
    assert found is not None and found.text == "Evaluator: state block found again."
    assert describe_evaluator("lost", {"state": "locked"}, True, False) is None  # another line was said since
    ambiguous = describe_evaluator("scanning", {"state": "ambiguous", "message": "2 places match the signature"}, True,
                                   False)
    assert ambiguous is not None and ambiguous.error and "2 places match" in ambiguous.text


def test_a_success_met_on_the_humans_step_is_called_human_assisted_in_live_and_replay():
    from pathlib import Path

    from core.labels.episodes import EpisodeLabels
    from core.labels.model import LabelDocument
    from studio.replay.episode_list import result_text

    text, error = describe_end(ended(EpisodeResult("q01", True, 7, "success", success_step=7, success_source="human")))
    assert "human-assisted, not the agent's" in text and not error
    earned = ended(EpisodeResult("q01", True, 7, "success", success_step=7, success_source="agent"))
    assert describe_end(earned)[0].startswith("Episode succeeded at step 7")
    for source, shown in (("human", "success (human-assisted)"), ("agent", "success")):
        outcome = EpisodeResult("q01", True, 7, "success", success_step=7, success_source=source)
        episode = EpisodeLabels(Path("e.h5"), {}, outcome, 7, LabelDocument())
        assert result_text(episode) == shown


def ended(result: EpisodeResult, kind: str = "error") -> EpisodeEnd:
    return EpisodeEnd(result, Path("episode.h5"), kind)
