"""The step timeline's marks and spans are told apart by colour: a human step's tick is not the Aware span's
orange (they were 240,130,0 and 255,150,0), and the clip and the map use the timeline's colours."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from core.export.clip_data import HUMAN_RGB
from widgets.timeline import MARK_COLORS, SPAN_COLORS
from widgets.trajectory_plot import INTERVENTION_STYLE


def _distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def _rgb(colour) -> tuple[int, int, int]:
    return colour.red(), colour.green(), colour.blue()


def test_every_mark_stands_apart_from_every_span_and_every_other_mark():
    marks = {name: _rgb(c) for name, c in MARK_COLORS.items()}
    spans = {name: _rgb(c) for name, c in SPAN_COLORS.items() if name != "rejected"}
    for name, mark in marks.items():
        for other, colour in [*spans.items(), *((n, c) for n, c in marks.items() if n != name)]:
            assert _distance(mark, colour) > 90, f"{name} {mark} looks like {other} {colour}"


def test_the_clip_and_the_map_draw_human_steps_in_the_timeline_colour():
    assert HUMAN_RGB == _rgb(MARK_COLORS["human"]) == INTERVENTION_STYLE["human"][1]
