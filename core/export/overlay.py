"""Drawing a clip's overlays onto one picture: step and action, self-assessment colour, labels and
interventions, a trajectory inset, and the agent's thought wrapped in a caption below the game.

Pillow draws the text (TrueType, any script the font covers); OpenCV only resizes. Everything is
RGB uint8; the output size is fixed for a whole clip and even in both directions (H.264 needs it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from core.episode import StepRecord
from core.export import ExportError
from core.export.clip_data import HUMAN_RGB, INTERVENTION_RGB, SPAN_RGB, ClipEpisode
from core.export.fonts import Font, load_font
from core.export.inset import TrajectoryInset

OVERLAYS = ("step", "thought", "assessment", "trajectory", "labels")
ASSESSMENT_RGB = {"progressing": (40, 150, 60), "stuck": (200, 40, 40), "unsure": (200, 140, 0),
                  "missing": (130, 130, 130)}
CAPTION_BACKGROUND = (28, 28, 32)


@dataclass(frozen=True)
class OverlayOptions:
    shown: frozenset[str] = field(default_factory=lambda: frozenset(OVERLAYS))
    width: int = 960          # of the output picture; the height follows the game's aspect
    thought_lines: int = 3    # the caption's height, in lines; a longer thought ends with an ellipsis


def parse_overlays(text: str) -> frozenset[str]:
    """'all', 'none' or a comma list of OVERLAYS. Raises ExportError."""
    text = (text or "").strip().lower()
    if text in ("all", ""):
        return frozenset(OVERLAYS)
    if text == "none":
        return frozenset()
    chosen = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(chosen - set(OVERLAYS))
    if unknown:
        raise ExportError(f"unknown overlay(s) {', '.join(unknown)}; choose from {', '.join(OVERLAYS)}, all or none")
    return frozenset(chosen)


def wrap_text(text: str, font: Font, width: float, max_lines: int) -> list[str]:
    """Greedy word wrap to `width` pixels; words longer than a line are cut; overflow ends in '…'."""
    lines: list[str] = []
    current = ""
    for word in " ".join(text.split()).split(" "):
        candidate = f"{current} {word}".strip()
        if font.getlength(candidate) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        current = word
        while font.getlength(current) > width and len(current) > 1:  # one word wider than the line
            cut = len(current)
            while cut > 1 and font.getlength(current[:cut]) > width:
                cut -= 1
            lines.append(current[:cut])
            current = current[cut:]
    if current:
        lines.append(current)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        while last and font.getlength(last + "…") > width:
            last = last[:-1]
        lines[-1] = last.rstrip() + "…"
    return lines


def _even(value: float) -> int:
    return max(2, round(value / 2) * 2)


def describe_step(record: StepRecord) -> str:
    if record.source == "human":
        return "human input"
    if record.source == "intervention":
        kind = record.intervention.kind if record.intervention is not None else "?"
        return f"intervention: {kind.replace('_', ' ')}"
    if record.damaged:
        return "record damaged"
    if record.decision is not None and record.decision.parse_error:
        return "no valid action (reply not understood)"
    return record.action or "?"


def _thought(record: StepRecord) -> str:
    return record.decision.thought.strip() if record.decision is not None else ""


def caption_text(record: StepRecord) -> str:
    thought = _thought(record)
    if thought:
        return thought
    if record.damaged:
        return f"({record.damaged})"
    if record.source == "human":
        return "(a person had the controls at this step)"
    if record.source == "intervention":
        return "(an intervention, not the agent)"
    if record.decision is not None and record.decision.parse_error:
        return f"(the reply could not be read: {record.decision.parse_error})"
    return "(no thought given)"


class OverlayRenderer:
    def __init__(self, episode: ClipEpisode, first: int, last: int, options: OverlayOptions,
                 picture_shape: tuple[int, ...]) -> None:
        if options.width < 160:
            raise ExportError(f"--width must be at least 160 pixels, got {options.width}")
        self.episode, self.options = episode, options
        height, width = picture_shape[:2]
        self.frame_size = (_even(options.width), _even(options.width * height / width))
        scale = self.frame_size[0] / 960
        self.font = load_font(max(13, round(20 * scale)))
        self.bold = load_font(max(13, round(20 * scale)), bold=True)
        self.margin = max(6, round(12 * scale))
        self.line_height = round(self.font.size * 1.3) if isinstance(self.font, ImageFont.FreeTypeFont) else 18
        self.caption_height = 0
        if "thought" in options.shown and options.thought_lines > 0:
            self.caption_height = _even(2 * self.margin + options.thought_lines * self.line_height)
        self.size = (self.frame_size[0], self.frame_size[1] + self.caption_height)  # (width, height)
        self.inset = None
        if "trajectory" in options.shown and len(episode.sample_xy):
            side = round(min(self.frame_size) * 0.34)
            self.inset = TrajectoryInset(episode, first, last, side, max(1, round(2 * scale)))

    def render(self, picture: np.ndarray, position: int, tick: int) -> np.ndarray:
        """The output picture for `picture` shown during the step at `position`, at game tick `tick`."""
        width, frame_height = self.frame_size
        shrink = picture.shape[1] > width
        resized = cv2.resize(picture, (width, frame_height),
                             interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        canvas = Image.new("RGB", self.size, CAPTION_BACKGROUND)
        canvas.paste(Image.fromarray(np.ascontiguousarray(resized)), (0, 0))
        layer = Image.new("RGBA", self.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        record = self.episode.records[position]
        shown = self.options.shown
        assessment = record.self_assessment if record.by_agent else ""
        if "assessment" in shown and assessment:
            thickness = max(3, self.margin // 2)
            draw.rectangle((0, 0, width - 1, frame_height - 1), outline=(*ASSESSMENT_RGB.get(
                assessment, ASSESSMENT_RGB["missing"]), 255), width=thickness)
        if "step" in shown or ("assessment" in shown and assessment):
            self._step_badge(draw, position, record, assessment if "assessment" in shown else "")
        badges_bottom = 0.0
        if "labels" in shown:
            badges_bottom = self._label_badges(draw, position, record)
        if self.caption_height:
            self._caption(draw, record)
        canvas = Image.alpha_composite(canvas.convert("RGBA"), layer)
        if self.inset is not None:
            inset = self.inset.render(self.episode.sample_at(tick))
            # bottom right, unless a dialogue box is up: the game draws it along the bottom, and its words
            # matter more than the map, so the inset moves to the top right, under the badges
            top = (max(badges_bottom, self.margin) if self._dialogue_shown(position)
                   else frame_height - inset.height - self.margin)
            canvas.alpha_composite(inset, (width - inset.width - self.margin, round(top)))
        return np.asarray(canvas.convert("RGB"))

    # -- pieces ---------------------------------------------------------------------------------
    def _badge(self, draw: ImageDraw.ImageDraw, x: float, y: float, text: str, fill: tuple[int, int, int, int],
               font: Font, right_aligned: bool = False) -> float:
        """A text on a rounded box; returns the box's width."""
        pad = self.margin * 0.5
        box_width = font.getlength(text) + 2 * pad
        left = x - box_width if right_aligned else x
        draw.rounded_rectangle((left, y, left + box_width, y + self.line_height + pad), radius=pad, fill=fill)
        draw.text((left + pad, y + pad * 0.5), text, font=font, fill=(255, 255, 255, 255))
        return box_width

    def _step_badge(self, draw: ImageDraw.ImageDraw, position: int, record: StepRecord, assessment: str) -> None:
        x = y = float(self.margin)
        if "step" in self.options.shown:
            text = f"Step {int(self.episode.steps[position])} · {describe_step(record)}"
            max_width = self.frame_size[0] * 0.6
            if self.bold.getlength(text) > max_width:  # a long continuous action
                while len(text) > 1 and self.bold.getlength(text + "…") > max_width:
                    text = text[:-1]
                text += "…"
            x += self._badge(draw, x, y, text, (0, 0, 0, 170), self.bold) + self.margin * 0.5
        if assessment:
            self._badge(draw, x, y, assessment, (*ASSESSMENT_RGB.get(assessment, ASSESSMENT_RGB["missing"]), 230),
                        self.font)

    def _dialogue_shown(self, position: int) -> bool:
        """Whether the game shows a dialogue box during this step: open as it began, or opened by it."""
        records = self.episode.records
        return records[position].dialogue_open or (position + 1 < len(records) and records[position + 1].dialogue_open)

    def _label_badges(self, draw: ImageDraw.ImageDraw, position: int, record: StepRecord) -> float:
        """Draws the step's label, intervention and human badges down the right; returns where they end."""
        step = int(self.episode.steps[position])
        badges = [(span.text, SPAN_RGB[span.kind]) for span in self.episode.spans_at(step)]
        intervention = record.intervention
        if intervention is not None:
            kind = intervention.kind.replace("_", " ")
            badges.append((f"Intervention: {kind} ({intervention.source})", INTERVENTION_RGB))
        if record.source == "human":
            badges.append(("Human input", HUMAN_RGB))
        y = float(self.margin)
        for text, colour in badges:
            self._badge(draw, self.frame_size[0] - self.margin, y, text, (*colour, 225), self.font, right_aligned=True)
            y += self.line_height + self.margin
        return y

    def _caption(self, draw: ImageDraw.ImageDraw, record: StepRecord) -> None:
        top = self.frame_size[1] + self.margin
        text = caption_text(record)
        lines = wrap_text(text, self.font, self.frame_size[0] - 2 * self.margin, self.options.thought_lines)
        colour = (235, 235, 235, 255) if _thought(record) else (160, 160, 160, 255)
        for index, line in enumerate(lines):
            draw.text((self.margin, top + index * self.line_height), line, font=self.font, fill=colour)
