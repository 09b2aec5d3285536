"""Prompt templates, kept as files in assets/prompts/ (one per granularity), rendered for an Observation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.agents.actions import ActionSet
from core.agents.hearing import (
    CLIP_SENTENCE,
    NO_SOUND,
    NOTHING_HEARD,
    SPECTROGRAM_SENTENCE,
    clip_wav,
    spectrogram_picture,
)
from core.agents.observation import Observation
from core.paths import ASSETS_DIR

PROMPTS_DIR = ASSETS_DIR / "prompts"


@dataclass(frozen=True)
class Prompt:
    system: str
    text: str
    images: list[tuple[str, np.ndarray]]  # (label, RGB image)
    audio: bytes | None = None            # a WAV of the last step's sound (`--audio clip`)


class PromptBook:
    def __init__(self, folder: Path = PROMPTS_DIR) -> None:
        def read(name: str) -> str:
            path = folder / name
            try:
                return path.read_text(encoding="utf-8")
            except OSError as exc:
                raise FileNotFoundError(f"prompt template {path} is missing: {exc.strerror}") from None

        self.system_template = read("system.txt")
        self.turn_template = read("turn.txt")
        self.reflection_template = read("reflection.txt")
        self.task_templates = {g: read(f"step_{g}.txt") for g in ("visual_guided", "step_guided", "goal_only")}

    def system(self, actions: ActionSet, paradigm: str) -> str:
        if paradigm == "continuous":
            section = ("Continuous control: give the left stick (move, relative to the camera) and the right stick "
                       "(camera) as [x, y] in [-1, 1], a duration in seconds, and optional buttons (A, B).")
            action_format = ('{"type": "continuous", "left_stick": [x, y], "right_stick": [x, y], '
                             '"duration": seconds, "buttons": []}')
        else:
            section = "Available actions: " + ", ".join(actions.names) + "."
            action_format = '"<one action name>"'
        return self.system_template.format(action_section=section, action_format=action_format)

    def turn(self, observation: Observation, granularity: str, memory: str = "") -> Prompt:
        images: list[tuple[str, np.ndarray]] = [("current view", observation.frame)]
        if observation.previous_frame is not None:
            images.insert(0, ("previous view (before your last action)", observation.previous_frame))
        if observation.left_view is not None and observation.right_view is not None:
            images += [("view to your left", observation.left_view), ("view to your right", observation.right_view)]
        sound, audio = "", None
        if observation.audio_mode != "none":
            if observation.audio is None:
                sound = NOTHING_HEARD if observation.step <= 1 else NO_SOUND
            elif observation.audio_mode == "spectrogram":
                height, width = observation.frame.shape[:2]
                picture = observation.hearing if observation.hearing is not None \
                    else spectrogram_picture(observation.audio, width, height)
                images.append(("sound of your last action (a spectrogram)", picture))
                sound = SPECTROGRAM_SENTENCE
            else:
                audio, sound = clip_wav(observation.audio), CLIP_SENTENCE
        listing = "Images: " + "; ".join(f"image {i + 1} is the {label}" for i, (label, _) in enumerate(images)) + "."
        history = ""
        actions_taken = [h for h in observation.history if h.action != "Hint"]
        if actions_taken:
            lines = [f"  step {h.step}: {h.action} ({h.self_assessment or 'unsure'})" for h in actions_taken]
            history = "Your recent actions:\n" + "\n".join(lines) + "\n"
        hints = [h.feedback for h in observation.history if h.action == "Hint" and h.feedback]
        feedback = f"Note: {hints[-1]}\n" if hints and observation.history[-1].action == "Hint" else ""
        memory_text = f"Your notes so far:\n{memory}\n" if memory else ""
        task = self.task_templates[granularity].format(instruction=observation.instruction).strip()
        text = self.turn_template.format(task=task, step=observation.step, images=listing, memory=memory_text,
                                         history=history, feedback=feedback, sound=f"{sound}\n" if sound else "")
        return Prompt(system="", text=text, images=images, audio=audio)
