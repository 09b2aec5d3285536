"""`export_dataset`: a run's episodes as a Minari dataset (offline RL and imitation learning).

Minari (the `export` extra) writes the dataset with its own writer, so `minari.load_dataset` and
`minari.MinariDataset` read it back. `--out DIR` is a Minari datasets root: the dataset lands in
DIR/<namespace>/<name>-v<version>/ and loads with MINARI_DATASETS_PATH=DIR. Transitions, actions and
rewards: core/export/trajectory.py. Privileged (scripted driver) episodes are left out unless asked for.
LeRobot is not written: see LEROBOT_NOT_BUILT and docs/export.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import threading
import warnings
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.agents.actions import ActionSet
from core.analysis.report import ReportError, load_results
from core.audio.clip import AudioLayout
from core.backends.profile import load_backend
from core.episode import read_header
from core.evaluation.profile import load_profile
from core.evaluation.tasks import TaskFileError, load_task, task_files
from core.export import ExportCancelled, ExportError
from core.export.trajectory import CONTINUOUS_FIELDS, NOOP, Segment, episode_segments
from core.paths import PROFILES_DIR, TASKS_DIR
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from core.session.reward import RewardSpec
from core.session.run_folder import ERROR, is_error

if TYPE_CHECKING:
    from minari.data_collector import EpisodeBuffer

FORMATS = ("minari", "lerobot")
BUILTIN_GAME = "Harborvale"
MINARI_NEEDED = "writing a Minari dataset needs minari: pip install -e \".[export]\""
LEROBOT_NOT_BUILT = (
    "LeRobot export is not built in. LeRobot's writer (the lerobot package, 0.4.x) needs PyTorch with NVIDIA's CUDA "
    "libraries, torchvision, torchcodec, datasets, diffusers and about 90 packages in all (several GB), and it pins "
    "older numpy and OpenCV than this project uses. Export --format minari and convert, as docs/export.md shows.")
Progress = Callable[[int, int, str], None]  # (episodes done, episodes in all, the file just done)


@dataclass(frozen=True)
class DatasetOptions:
    size: tuple[int, int] = (160, 90)          # observation width, height (the Gymnasium wrapper's default)
    include_privileged: bool = False
    dataset_id: str | None = None              # default: pokegym/<run folder name>-v0
    jpeg: bool = False                         # Minari's JPEG encoding of observations (lossy, smaller)
    dense_reward: bool = True                  # False: only the success bonus
    task_dirs: tuple[Path, ...] = ()           # where else to look for task files (TASKS_DIR always)
    author: str | None = None                  # Minari's dataset metadata
    author_email: str | None = None
    audio: bool = False                        # observations also carry the sound before them ("audio" key)
    audio_seconds: float = 1.0                 # how much of it: the last this many seconds of the previous step


@dataclass
class DatasetResult:
    dataset_id: str
    root: Path                  # the datasets root (MINARI_DATASETS_PATH)
    path: Path                  # the dataset's own folder
    episodes: int
    segments: int
    steps: int
    skipped: list[str] = field(default_factory=list[str])  # why each left-out file was left out


def parse_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[x×]\s*(\d+)\s*", text or "")
    if match is None or not (8 <= int(match.group(1)) <= 4096 and 8 <= int(match.group(2)) <= 4096):
        raise ExportError(f"--size must be WIDTHxHEIGHT in pixels (8 to 4096 each), like 160x90; got {text!r}")
    return int(match.group(1)), int(match.group(2))


def episode_files(folder: Path) -> tuple[list[Path], list[str]]:
    """The run's episode files (from results.jsonl when there is one, else every .h5 below the folder)
    and why any were left out."""
    if not folder.is_dir():
        raise ExportError(f"{folder} is not a folder; give a run folder (python main.py run --out FOLDER) or a "
                          "folder of episode files")
    if not (folder / "results.jsonl").is_file():
        files = sorted(folder.rglob("*.h5"))
        if not files:
            raise ExportError(f"{folder} holds no results.jsonl and no .h5 episode files")
        return files, []
    try:
        rows, skipped = load_results(folder)
    except ReportError as exc:
        raise ExportError(str(exc)) from None
    files: list[Path] = []
    for row in rows:
        if is_error(row) or not row.get("episode"):
            skipped.append(f"{row.get('key', '?')}: ended in an infrastructure error ({row.get('error')}), "
                           "which is not a result")
        elif not (folder / row["episode"]).is_file():
            skipped.append(f"{folder / row['episode']} is listed in results.jsonl but missing")
        else:
            files.append(folder / row["episode"])
    return files, skipped


class _Tasks:
    """Task lookup by id in TASKS_DIR and the extra folders, loaded once."""

    def __init__(self, folders: tuple[Path, ...], flags: list[str], dense: bool) -> None:
        self.folders, self.flags, self.dense = (TASKS_DIR, *folders), flags, dense
        self._specs: dict[str, RewardSpec] | None = None

    def reward(self, task_id: str) -> RewardSpec | None:
        if self._specs is None:
            self._specs = {}
            for folder in self.folders:
                for path in task_files(Path(folder)):
                    try:
                        task = load_task(path, self.flags)
                    except TaskFileError:
                        continue  # a broken file only matters if it is the task asked for: reported as not found
                    self._specs.setdefault(task.id, RewardSpec.for_task(task, self.flags, self.dense))
        return self._specs.get(task_id)


@contextlib.contextmanager
def _datasets_root(root: Path) -> Generator[None, None, None]:
    """Minari places datasets under MINARI_DATASETS_PATH; point it at --out for the writer's calls only."""
    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


def _default_id(folder: Path) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", folder.resolve().name.lower()).strip("_") or "run"
    return f"pokegym/{name}-v0"


def _check_id(dataset_id: str) -> None:
    if not re.fullmatch(r"([a-z0-9_]+/)?[a-z0-9_]+-v\d+", dataset_id):
        raise ExportError(f"--name must look like pokegym/my_run-v0 (lower-case letters, digits and _, then -vN); "
                          f"got {dataset_id!r}")


def _sound_of(path: Path) -> AudioLayout | None:
    with EpisodeReader(path) as reader:
        return reader.audio_layout()


def _select(files: list[Path], options: DatasetOptions, skipped: list[str],
            layouts: set[AudioLayout] | None = None) -> tuple[list[Path], set[str], set[str]]:
    kept: list[Path] = []
    paradigms: set[str] = set()
    agents: set[str] = set()
    for path in files:
        try:
            header = read_header(path)
            metadata, result = header.metadata, header.result
            layout = _sound_of(path) if options.audio else None
        except EpisodeFileError as exc:
            skipped.append(f"{path}: {exc}")
            continue
        except (KeyError, OSError, ValueError, RuntimeError, zlib.error) as exc:  # damaged inside
            skipped.append(f"{path}: damaged ({type(exc).__name__}: {exc})")
            continue
        if metadata.get("privileged") and not options.include_privileged:
            skipped.append(f"{path}: privileged (scripted driver) episode; --include-privileged adds it")
        elif result is None:
            skipped.append(f"{path}: cut short (no result recorded), so its outcome is unknown")
        elif result.end_reason == ERROR:
            skipped.append(f"{path}: ended in an infrastructure error ({result.error}), which is not a result")
        elif metadata.get("judged") is False:
            skipped.append(f"{path}: unjudged ({metadata.get('unjudged') or 'no memory profile'}): it recorded no "
                           "positions, so it has no reward")
        elif metadata.get("game", BUILTIN_GAME) != BUILTIN_GAME:
            skipped.append(f"{path}: recorded on {metadata.get('game')}; only the built-in world's action set and "
                           "tasks are known to the exporter")
        elif options.audio and layout is None:
            skipped.append(f"{path}: recorded without sound (audio: {metadata.get('audio', 'unavailable')}), and "
                           "--audio asks for it")
        else:
            if layout is not None and layouts is not None:
                layouts.add(layout)
            kept.append(path)
            options_used: dict[str, Any] = metadata.get("options") or {}
            paradigms.add(str(options_used.get("paradigm", "discrete")))
            agents.add(str(metadata.get("agent", "?")))
    return kept, paradigms, agents


def export_dataset(folder: Path, out: Path, fmt: str = "minari", options: DatasetOptions | None = None,
                   progress: Progress | None = None, cancel: threading.Event | None = None) -> DatasetResult:
    """Raises ExportError (with what to do) or ExportCancelled; a failed export leaves no dataset behind."""
    options = options or DatasetOptions()
    if fmt == "lerobot":
        raise ExportError(LEROBOT_NOT_BUILT)
    if fmt != "minari":
        raise ExportError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if importlib.util.find_spec("minari") is None:
        raise ExportError(MINARI_NEEDED)
    folder, out = Path(folder), Path(out)
    dataset_id = options.dataset_id or _default_id(folder)
    _check_id(dataset_id)
    target = out / dataset_id
    if target.exists():
        raise ExportError(f"{target} already exists; Minari never overwrites a dataset: choose another --name "
                          "(or a higher version, -v1) or delete that folder")
    if options.audio and not 0 < options.audio_seconds <= 60:
        raise ExportError(f"--audio-seconds must be in (0, 60], got {options.audio_seconds:g}")
    files, skipped = episode_files(folder)
    layouts: set[AudioLayout] = set()
    files, paradigms, agents = _select(files, options, skipped, layouts)
    if not files:
        raise ExportError(f"no episode in {folder} can go into a dataset: " + "; ".join(skipped[:5]))
    if len(layouts) > 1:
        found = ", ".join(f"{layout.rate} Hz x {layout.channels}" for layout in sorted(layouts, key=str))
        raise ExportError(f"{folder} mixes sound formats ({found}), which cannot share the \"audio\" observation; "
                          "export them from separate folders, or without --audio")
    if len(paradigms) > 1:
        raise ExportError(f"{folder} mixes discrete and continuous-control episodes, which need different action "
                          "spaces; export them from separate folders")
    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = load_backend("builtin").action_set()
    tasks = _Tasks(options.task_dirs, profile.flags, options.dense_reward)
    paradigm = paradigms.pop()
    try:
        with _datasets_root(out):
            return _write(files, dataset_id, out, target, paradigm, actions, tasks, options, skipped, progress, cancel,
                          ", ".join(sorted(agents)), layouts.pop() if layouts else None)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)  # no half-written dataset
        raise


def _write(files: list[Path], dataset_id: str, out: Path, target: Path, paradigm: str, actions: ActionSet,
           tasks: _Tasks, options: DatasetOptions, skipped: list[str], progress: Progress | None,
           cancel: threading.Event | None, agents: str, sound: AudioLayout | None) -> DatasetResult:
    import gymnasium as gym
    import minari
    from minari.data_collector import EpisodeBuffer

    width, height = options.size
    observation_space: gym.Space[Any] = gym.spaces.Box(0, 255, (height, width, 3), np.uint8)
    audio_frames = round(options.audio_seconds * sound.rate) if sound is not None else None
    if sound is not None and audio_frames is not None:
        # Sound before each picture: observations become {"image", "audio"} (docs/export.md).
        observation_space = gym.spaces.Dict({
            "image": observation_space,
            "audio": gym.spaces.Box(-32768, 32767, (audio_frames, sound.channels), np.int16)})
    action_space: gym.Space[Any] = gym.spaces.Discrete(len(actions.names) + 1) if paradigm == "discrete" else \
        gym.spaces.Box(np.array([-1, -1, -1, -1, 0] + [0] * (len(CONTINUOUS_FIELDS) - 5), np.float32),
                       np.array([1, 1, 1, 1, 10] + [1] * (len(CONTINUOUS_FIELDS) - 5), np.float32))
    dataset = None
    episode_metadata: list[dict[str, Any]] = []
    summary: dict[str, set[str]] = {"tasks": set(), "granularities": set(), "agents": set()}
    steps = 0
    for done, path in enumerate(files):
        if cancel is not None and cancel.is_set():
            raise ExportCancelled("the dataset export was cancelled; nothing was kept")
        metadata = read_header(path).metadata
        task_id = str(metadata.get("task_id", "?"))
        reward = tasks.reward(task_id)
        if reward is None:
            searched = ", ".join(str(f) for f in tasks.folders)
            raise ExportError(f"{path} is an episode of task {task_id!r}, which is in none of {searched}; its reward "
                              "needs the task's goal and flags: pass --tasks-dir FOLDER with its YAML")
        try:
            segments = episode_segments(path, reward, actions, options.size, audio_frames)
        except EpisodeFileError as exc:
            raise ExportError(f"{exc}; the file was left unchanged. Move it out of the folder to export the "
                              "others") from None
        except (KeyError, OSError, ValueError, RuntimeError, zlib.error) as exc:  # damaged inside: say which file
            raise ExportError(f"{path} could not be read ({type(exc).__name__}: {exc}); it was left unchanged. "
                              "Move it out of the folder to export the others") from None
        for segment in segments:
            buffer = _buffer(EpisodeBuffer, segment)
            if dataset is None:
                with warnings.catch_warnings():  # Minari's advice to fill optional fields (--author does)
                    warnings.filterwarnings("ignore", r".*(is set to None|env_spec is None).*", UserWarning)
                    dataset = minari.create_dataset_from_buffers(
                        dataset_id, [buffer], observation_space=observation_space, action_space=action_space,
                        algorithm_name=agents, author=options.author, author_email=options.author_email,
                        description="PokeGym episodes: RGB frames the agent saw" + (
                            " and the sound before each" if sound is not None else "") + ", its actions, the dense "
                        "reward (docs/export.md)", data_format="hdf5", jpeg_encoding=options.jpeg)
            else:
                dataset.update_dataset_from_buffer([buffer])
            steps += len(segment.rewards)
            episode_metadata.append({**segment.metadata, **{k: str(metadata.get(k, "")) for k in (
                "task_id", "quest", "category", "granularity", "agent")}})
        for key, name in (("tasks", "task_id"), ("granularities", "granularity"), ("agents", "agent")):
            summary[key].add(str(metadata.get(name, "?")))
        if progress is not None:
            progress(done + 1, len(files), str(path))
    if dataset is None:
        raise ExportError("the chosen episodes hold no step taken by the policy (only human or intervention steps)")
    dataset.storage.update_episode_metadata(episode_metadata, range(len(episode_metadata)))
    dataset.storage.update_metadata({"pokegym": {
        "source": str(files[0].parent), "episode_files": len(files), "paradigm": paradigm,
        "tasks": sorted(summary["tasks"]), "granularities": sorted(summary["granularities"]),
        "agents": sorted(summary["agents"]), "observation": f"{width}x{height} RGB, the step image the agent saw",
        "action_names": [*actions.names, NOOP] if paradigm == "discrete" else list(CONTINUOUS_FIELDS),
        "reward": "dense" if options.dense_reward else "success only",
        "privileged_included": options.include_privileged,
        "gymnasium_env": "PokeGym/Harborvale-v0 (import core.session.gym_env); its action i is action_names[i]",
        "audio": None if sound is None else {
            "rate": sound.rate, "channels": sound.channels, "frames": audio_frames,
            "content": "observations['audio'][k]: the last frames of the sound of the step before observation k, "
                       "int16, right-aligned, zero-padded at the start; infos['audio_frames'][k] of them are real"}}})
    return DatasetResult(dataset_id, out, target, len(files), len(episode_metadata), steps, skipped)


def _buffer(buffer_type: type[EpisodeBuffer], segment: Segment) -> EpisodeBuffer:
    observations: Any = segment.observations if segment.audio is None else \
        {"image": segment.observations, "audio": segment.audio}
    return buffer_type(observations=observations, actions=segment.actions, rewards=segment.rewards,
                       terminations=segment.terminations, truncations=segment.truncations, infos=segment.infos)
