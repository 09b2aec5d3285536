"""Real episodes, recorded by the runner on the built-in world, and the ways files get damaged on disk:
flipped bytes in an image chunk or a step record, a deleted group, bad version attributes, truncation,
a text file renamed .h5, both label copies corrupted."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np

from core.agents.base import RandomAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.episode.metrics import LOST
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.tasks import load_task
from core.game.builtin import BuiltinWorld
from core.labels.model import AnnotatorLabels, DeadlockLabel
from core.labels.store import save_labels
from core.paths import PROFILES_DIR, TASKS_DIR
from core.recording.writer import LABEL_SLOT_BYTES, LABEL_SLOTS
from core.session.runner import EpisodeRunner, RunOptions

STEPS = 6


def record_episode(path: Path, steps: int = STEPS, seed: int = 5,
                   observation: ObservationOptions | None = None) -> Path:
    """A real episode: the runner drives a random agent through the built-in world and records it."""
    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q08_site_navigation.yaml", profile.flags)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, RandomAgent(actions, seed=seed), actions, task,
                      RunOptions(step_budget=steps, observation=observation or ObservationOptions()), path).run()
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def labels(annotator: str, note: str = "") -> AnnotatorLabels:
    return AnnotatorLabels(annotator, spans=(DeadlockLabel(2, 4, kind="unaware", note=note),), failure_category=LOST,
                           category_confirmed=True)


def _flip(path: Path, offset: int, count: int) -> None:
    with path.open("r+b") as stream:
        stream.seek(offset)
        original = stream.read(count)
        stream.seek(offset)
        stream.write(bytes(byte ^ 0xFF for byte in original))


def flip_chunk(path: Path, dataset: str, coordinates: tuple[int, ...], at: int | None = None) -> None:
    """Flip 16 bytes of one stored chunk (`at` bytes in, or its middle), as a bad sector or bit rot would."""
    with h5py.File(path, "r") as file:
        info = file[dataset].id.get_chunk_info_by_coord(coordinates)
    _flip(path, info.byte_offset + (info.size // 2 if at is None else at), 16)


def flip_image_chunk(path: Path, step_index: int, image_set: str = "current") -> None:
    flip_chunk(path, f"images/{image_set}", (step_index, 0, 0, 0))


def delete_part(path: Path, *names: str) -> None:
    with h5py.File(path, "r+") as file:
        for name in names:
            del file[name]


def set_attribute(path: Path, name: str, value: object) -> None:
    with h5py.File(path, "r+") as file:
        file.attrs[name] = value


def delete_attribute(path: Path, name: str) -> None:
    with h5py.File(path, "r+") as file:
        del file.attrs[name]


def truncate(path: Path, keep: float = 0.5) -> None:
    os.truncate(path, int(path.stat().st_size * keep))


def damage_both_label_slots(path: Path) -> None:
    """Two annotators' labels saved, then both stored copies' payloads damaged (headers intact)."""
    save_labels(path, labels("alice"))
    save_labels(path, labels("bob"))
    with h5py.File(path, "r") as file:
        offset = file["labels"]["slots"].id.get_offset()
    for slot in range(LABEL_SLOTS):
        _flip(path, offset + slot * LABEL_SLOT_BYTES + 40, 64)


def text_renamed(path: Path) -> None:
    path.write_text("run notes: q08 looked fine, q04 froze at step 3\n")


# name: (what to do to a copy of a real episode, the damaged part an error must name)
DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "image chunk": (lambda p: flip_image_chunk(p, 2), "/images/current at step 3"),
    "step record": (lambda p: flip_chunk(p, "steps/record_bytes", (0,), at=4),
                    "/steps/record_bytes at step 1"),
    "version 'abc'": (lambda p: set_attribute(p, "format_version", "abc"), "format_version attribute"),
    "version [1, 2]": (lambda p: set_attribute(p, "format_version", np.array([1, 2])), "format_version attribute"),
    "version 1.5": (lambda p: set_attribute(p, "format_version", 1.5), "format_version attribute"),
    "version 0": (lambda p: set_attribute(p, "format_version", 0), "format_version attribute"),
    "version 7": (lambda p: set_attribute(p, "format_version", 7), "format_version attribute"),
    "no format marker": (lambda p: delete_attribute(p, "format"), "format attribute"),
    "metadata not JSON": (lambda p: set_attribute(p, "metadata_json", "{'task_id': q08"), "metadata_json attribute"),
    "no /steps": (lambda p: delete_part(p, "steps"), "/steps"),
    "no /images": (lambda p: delete_part(p, "images"), "/images"),
    "no /samples/table": (lambda p: delete_part(p, "samples/table"), "/samples/table"),
    "no /steps/record_index": (lambda p: delete_part(p, "steps/record_index"), "/steps/record_index"),
    "truncated": (truncate, "file"),
    "text renamed .h5": (text_renamed, "file"),
    "both label copies": (damage_both_label_slots, "/labels/slots"),
}


def damaged_copy(original: Path, folder: Path, damage: str) -> Path:
    """A copy of `original` in `folder` with `damage` (a DAMAGE key) done to it."""
    folder.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() else "_" for c in damage)
    path = folder / f"{name}.h5"
    shutil.copyfile(original, path)
    DAMAGE[damage][0](path)
    return path
