"""The Memory tab's candidate list marks a candidate whose ground axes turn the other way from the game's own
profile: the mirrored window [z, 1.0, x] that a search on Minetest once ranked alone at the top."""

from __future__ import annotations

from core.finder.ranking import RankedTriple
from studio.memory.finder_panel import FinderPanel


def triple(address: int, values: tuple[float, float, float], right_turn: float | None) -> RankedTriple:
    terms = {} if right_turn is None else {"right_turn": right_turn}
    return RankedTriple(address, values, 1, 0.8, 0.9, 40.0, 3, 1.0, terms)


def test_a_candidate_turning_against_the_games_profile_is_marked_mirrored(qtbot):
    panel = FinderPanel()
    qtbot.addWidget(panel)
    found = [triple(0x1000, (-1920.7, 46.3, 1285.6), -1.0), triple(0x2008, (1285.6, 1.0, -1920.7), 1.0),
             triple(0x3000, (5.0, 1.0, 5.0), None)]
    panel.ground_turn = "clockwise"  # Minetest's shipped profile
    panel.show_candidates(found)
    texts = [panel.candidates.item(row).text() for row in range(panel.candidates.count())]
    assert ["MIRRORED" in text for text in texts] == [False, True, False]  # unmeasured: not judged
    assert "other order" in panel.candidates.item(1).toolTip()
    panel.ground_turn = None  # a new game, no profile yet: nothing to compare with
    panel.show_candidates(found)
    assert not any("MIRRORED" in panel.candidates.item(row).text() for row in range(3))
