"""Optional self-reflection: every K steps the agent summarises its recent history.

The summary becomes a short-term memory fed into later prompts, and its lesson is added to an
experience library kept per model across episodes as a readable JSON file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.agents.observation import HistoryEntry
from core.paths import PROJECT_ROOT

EXPERIENCE_DIR = PROJECT_ROOT / "recordings" / "experience"
MAX_LESSONS = 20


@dataclass
class ExperienceLibrary:
    path: Path
    lessons: list[str] = field(default_factory=list)

    @classmethod
    def for_model(cls, model: str, folder: Path = EXPERIENCE_DIR) -> ExperienceLibrary:
        path = folder / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}.json"
        lessons: list[str] = []
        if path.exists():
            try:
                data = json.loads(path.read_text())
                lessons = [str(x) for x in data.get("lessons", [])][-MAX_LESSONS:]
            except (ValueError, AttributeError):
                lessons = []  # a damaged library starts afresh; the file is rewritten on the next lesson
        return cls(path, lessons)

    def add(self, lesson: str) -> None:
        lesson = lesson.strip()
        if not lesson or lesson.lower() in ("none", "none."):
            return
        if lesson not in self.lessons:
            self.lessons = [*self.lessons, lesson][-MAX_LESSONS:]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"lessons": self.lessons}, indent=2))
            temporary.replace(self.path)

    def text(self) -> str:
        return "\n".join(f"- {lesson}" for lesson in self.lessons[-5:])


def parse_reflection(text: str) -> tuple[str, str]:
    """(memory, lesson) from a reply with MEMORY: and LESSON: sections."""
    memory = re.search(r"MEMORY:\s*(.*?)(?:\n\s*LESSON:|\Z)", text, re.S | re.I)
    lesson = re.search(r"LESSON:\s*(.*)", text, re.S | re.I)
    memory_text = memory.group(1).strip() if memory else text.strip()
    return memory_text[:600], (lesson.group(1).strip() if lesson else "")[:300]


def steps_text(history: list[HistoryEntry]) -> str:
    return "\n".join(f"- step {h.step}: {h.action}; thought: {h.thought[:160]}; said: {h.self_assessment}"
                     for h in history if h.action != "Hint")
