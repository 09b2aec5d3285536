"""Optional self-reflection: every K steps the agent summarises its recent history.

The summary becomes a short-term memory fed into later prompts, and its lesson is added to an
experience library whose latest lessons are shown in every prompt.

Reproducibility (docs/reflection.md): a library is never picked up implicitly. A run starts from an
empty library, or from the file named with `--experience-from`; that starting library is snapshotted
into the run folder and into every episode file, and the lessons each prompt showed are recorded with
its step. Within a run every episode starts from the same snapshot and keeps its new lessons in a file
of its own (written atomically), so parallel workers never share a file and the outcome does not
depend on which episode finished first; the run merges them at the end (`merge_libraries`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from core.agents.observation import HistoryEntry

MAX_LESSONS = 20
SHOWN_LESSONS = 5
LIBRARY_FORMAT_VERSION = 1


class ExperienceError(ValueError):
    """An experience library file that cannot be used; the message says why and what to do."""


@dataclass
class ExperienceLibrary:
    """Lessons in order of arrival (oldest first). `path`: where new lessons are saved, or None (memory only)."""

    lessons: list[str] = field(default_factory=list[str])
    path: Path | None = None
    source: str = "empty"  # where the starting lessons came from, for the record

    @classmethod
    def load(cls, path: Path) -> ExperienceLibrary:
        """A library file, refused with a clear message when damaged: a run must never quietly start from
        something else than what the user named."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ExperienceError(f"experience library {path} does not exist; name a library.json written by an "
                                  "earlier run (RUN/experience/library.json), or leave --experience-from out to "
                                  "start with no lessons") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ExperienceError(f"experience library {path} cannot be read ({exc}); restore it or start without "
                                  "it") from None
        lessons: object = cast("dict[str, Any]", data).get("lessons") if isinstance(data, dict) else None
        if not isinstance(lessons, list) or not all(isinstance(item, str) for item in cast("list[object]", lessons)):
            raise ExperienceError(f"experience library {path} has no list of lessons; it is not a library file")
        return cls(cast("list[str]", lessons)[-MAX_LESSONS:], None, str(path))

    def copy_to(self, path: Path | None) -> ExperienceLibrary:
        """The same lessons, saving new ones to `path` (one file per episode)."""
        library = ExperienceLibrary(list(self.lessons), path, self.source)
        if path is not None:
            library.save()
        return library

    def add(self, lesson: str) -> None:
        lesson = lesson.strip()
        if not lesson or lesson.lower() in ("none", "none."):
            return
        if lesson not in self.lessons:
            self.lessons = [*self.lessons, lesson][-MAX_LESSONS:]
            if self.path is not None:
                self.save()

    def save(self) -> None:
        if self.path is not None:
            write_atomically(self.path, self.to_json())

    def shown(self) -> list[str]:
        """The lessons a prompt shows now."""
        return self.lessons[-SHOWN_LESSONS:]

    def text(self) -> str:
        return "\n".join(f"- {lesson}" for lesson in self.shown())

    def to_json(self) -> dict[str, Any]:
        return {"format_version": LIBRARY_FORMAT_VERSION, "lessons": list(self.lessons), "source": self.source}

    def snapshot(self) -> dict[str, Any]:
        """What an episode file records about the library it started from."""
        body = json.dumps(self.lessons, ensure_ascii=False)
        return {**self.to_json(), "sha256": hashlib.sha256(body.encode()).hexdigest()}


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write JSON through a temporary file in the same folder and rename it, so a reader (or a crash)
    never sees half a file, and two processes never write into the same temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def merge_libraries(start: ExperienceLibrary, learned: Iterable[ExperienceLibrary]) -> ExperienceLibrary:
    """The starting lessons, then each episode's new lessons in the order given (callers pass episodes in
    their fixed run order, not finishing order), without duplicates, the newest MAX_LESSONS kept."""
    lessons = list(start.lessons)
    for library in learned:
        lessons += [lesson for lesson in library.lessons if lesson not in lessons]
    return ExperienceLibrary(lessons[-MAX_LESSONS:], None, start.source)


def parse_reflection(text: str) -> tuple[str, str]:
    """(memory, lesson) from a reply with MEMORY: and LESSON: sections."""
    memory = re.search(r"MEMORY:\s*(.*?)(?:\n\s*LESSON:|\Z)", text, re.S | re.I)
    lesson = re.search(r"LESSON:\s*(.*)", text, re.S | re.I)
    memory_text = memory.group(1).strip() if memory else text.strip()
    return memory_text[:600], (lesson.group(1).strip() if lesson else "")[:300]


def steps_text(history: list[HistoryEntry]) -> str:
    return "\n".join(f"- step {h.step}: {h.action}; thought: {h.thought[:160]}; said: {h.self_assessment}"
                     for h in history if h.action != "Hint")
