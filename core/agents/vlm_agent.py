"""VLMAgent: asks a vision-language model for each action, with optional self-reflection."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from core.agents.actions import ActionSet
from core.agents.base import Decision, decision_from_reply
from core.agents.models.base import ModelClient, ModelError
from core.agents.observation import Observation
from core.agents.prompts import PromptBook
from core.agents.reflection import ExperienceLibrary, parse_reflection, steps_text


class VLMAgent:
    name = "vlm"

    def __init__(self, client: ModelClient, actions: ActionSet, granularity: str, paradigm: str = "discrete",
                 retry_on_parse_error: bool = True, reflection_every: int = 0,
                 library: ExperienceLibrary | None = None, prompts: PromptBook | None = None) -> None:
        self.client = client
        self.actions = actions
        self.granularity = granularity
        self.paradigm = paradigm
        self.retry_on_parse_error = retry_on_parse_error
        self.reflection_every = reflection_every
        self.library = library
        self.prompts = prompts or PromptBook()
        self.memory = ""
        self.last_reflection = ""
        # What this episode started from, recorded in its file (docs/reflection.md)
        self.experience_start = library.snapshot() if library is not None else None

    def describe(self) -> dict[str, Any]:
        return {"agent": self.name, "model": self.client.config.describe(), "granularity": self.granularity,
                "paradigm": self.paradigm, "retry_on_parse_error": self.retry_on_parse_error,
                "reflection_every": self.reflection_every, "experience_start": self.experience_start}

    def decide(self, observation: Observation) -> Decision:
        started = time.perf_counter()
        self.last_reflection = ""
        if self.reflection_every and observation.step > 1 and (observation.step - 1) % self.reflection_every == 0:
            self._reflect(observation)
        system = self.prompts.system(self.actions, self.paradigm)
        lessons = tuple(self.library.shown()) if self.library else ()
        memory = self.memory + (f"\nLessons from earlier episodes:\n{self.library.text()}"
                                if self.library and lessons else "")
        prompt = self.prompts.turn(observation, self.granularity, memory.strip())
        reply = self.client.complete(system, prompt.text, prompt.images, prompt.audio)  # ModelError ends the episode
        usage = reply.usage()
        decision = decision_from_reply(reply.text, self.actions, self.paradigm, started, usage)
        if decision.action is None and self.retry_on_parse_error:
            retry_text = (f"{prompt.text}\n\nYour previous answer could not be used: {decision.parse_error}. "
                          "Answer again with one JSON object.")
            second = self.client.complete(system, retry_text, prompt.images, prompt.audio)
            retry_usage = {**second.usage(), "retry_of": usage}
            retried = decision_from_reply(second.text, self.actions, self.paradigm, started, retry_usage)
            decision = replace(retried, raw_reply=f"{reply.text}\n--- retry ---\n{second.text}",
                               parse_error=retried.parse_error and
                               f"{decision.parse_error}; after retry: {retried.parse_error}")
        return replace(decision, memory=self.memory, reflection=self.last_reflection, lessons=lessons)

    def _reflect(self, observation: Observation) -> None:
        recent = list(observation.history)[-self.reflection_every:]
        text = self.prompts.reflection_template.format(instruction=observation.instruction, count=len(recent),
                                                       steps=steps_text(recent))
        try:
            reply = self.client.complete("You summarise your own play briefly.", text, [])
        except ModelError as exc:
            self.last_reflection = f"(reflection failed: {exc})"
            return
        self.memory, lesson = parse_reflection(reply.text)
        self.last_reflection = reply.text
        if self.library is not None and lesson:
            self.library.add(lesson)
