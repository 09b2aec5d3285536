"""The trajectory inset of a clip: the map's footprints, the whole episode's path in grey, the clip's
span highlighted, deadlock spans in red, and where the character is now with its heading.

World x runs right and y up (north); the picture's y runs down, so y is flipped. The background is
drawn once per clip; each picture only adds the position marker. Distances are in the game's own units
(the episode's `position_units`): the scale bar takes a round length in them and names them.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from core.episode.units import recorded_units, round_length, with_units
from core.export.clip_data import SPAN_RGB, ClipEpisode
from core.export.fonts import load_font

MIN_EXTENT_M = 60.0  # a character stuck in place still gets a readable neighbourhood
MARGIN_M = 6.0
SOLID_RGBA = (150, 150, 160, 255)
WATER_RGBA = (120, 170, 220, 255)
PATH_RGBA = (120, 120, 120, 200)
SPAN_RGBA = (25, 90, 220, 255)
POSITION_RGBA = (255, 140, 0, 255)


class TrajectoryInset:
    def __init__(self, episode: ClipEpisode, first: int, last: int, side: int, line: int) -> None:
        self.episode, self.side, self.line = episode, side, line
        xy = episode.sample_xy
        low, high = xy.min(axis=0) - MARGIN_M, xy.max(axis=0) + MARGIN_M
        extent = max(float((high - low).max()), MIN_EXTENT_M)
        self.centre = (low + high) / 2
        self.units_per_pixel = extent / side
        self.scale_bar = ""  # what the scale bar says ("20 m", "500 units"), once drawn
        self.background = self._background(first, last)

    def to_pixels(self, points: np.ndarray) -> list[tuple[float, float]]:
        scaled = (np.asarray(points, float) - self.centre) / self.units_per_pixel
        return [(self.side / 2 + x, self.side / 2 - y) for x, y in scaled]

    def _ticks_between(self, start_tick: int, end_tick: int) -> np.ndarray:
        ticks = self.episode.sample_ticks
        return np.nonzero((ticks >= start_tick) & (ticks <= end_tick))[0]

    def _background(self, first: int, last: int) -> Image.Image:
        image = Image.new("RGBA", (self.side, self.side), (250, 250, 250, 215))
        draw = ImageDraw.Draw(image)
        for kind, points in self.episode.outline():
            if len(points) >= 3:
                draw.polygon(self.to_pixels(points), fill=WATER_RGBA if kind == "water" else SOLID_RGBA)
        draw.line(self.to_pixels(self.episode.sample_xy), fill=PATH_RGBA, width=self.line)
        episode = self.episode
        for span in episode.spans:
            inside = np.nonzero((episode.steps >= span.start) & (episode.steps <= span.end))[0]
            if len(inside):
                self._segment(draw, int(inside[0]), int(inside[-1]), (*SPAN_RGB[span.kind], 255), self.line * 3)
        self._segment(draw, first, last, SPAN_RGBA, self.line * 2)
        self._scale_bar(draw)
        draw.rectangle((0, 0, self.side - 1, self.side - 1), outline=(60, 60, 60, 255), width=1)
        return image

    def _scale_bar(self, draw: ImageDraw.ImageDraw) -> None:
        distance = round_length(self.side / 8 * self.units_per_pixel)
        length = distance / self.units_per_pixel
        left, bottom = self.side * 0.05, self.side * 0.94
        draw.line([(left, bottom), (left + length, bottom)], fill=(40, 40, 40, 255), width=max(2, self.line))
        size = max(10, self.side // 16)
        self.scale_bar = with_units(distance, recorded_units(self.episode.metadata))
        draw.text((left, bottom - size - 4), self.scale_bar, fill=(40, 40, 40, 255), font=load_font(size))

    def _segment(self, draw: ImageDraw.ImageDraw, first: int, last: int, colour: tuple[int, ...], width: int) -> None:
        """The path the character took from the start of step `first` to the end of step `last`."""
        indices = self._ticks_between(int(self.episode.tick_before[first]), int(self.episode.tick_after[last]))
        points = self.to_pixels(self.episode.sample_xy[indices])
        if len(points) >= 2:
            draw.line(points, fill=colour, width=width, joint="curve")
        elif points:
            x, y = points[0]
            draw.ellipse((x - width, y - width, x + width, y + width), fill=colour)

    def render(self, sample: int | None) -> Image.Image:
        image = self.background.copy()
        if sample is None:
            return image
        draw = ImageDraw.Draw(image)
        (x, y), = self.to_pixels(self.episode.sample_xy[sample:sample + 1])
        facing = math.radians(float(self.episode.sample_facing[sample]))
        radius = max(3.0, self.side / 40)
        # facing 0 looks north (+y); positive turns toward -x (see core/evaluation/driver.py)
        tip = (x - math.sin(facing) * radius * 2.6, y - math.cos(facing) * radius * 2.6)
        draw.line([(x, y), tip], fill=(30, 30, 30, 255), width=max(2, self.line))
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=POSITION_RGBA, outline=(30, 30, 30, 255))
        return image
