"""`python main.py export`: share what a run found (docs/export.md).

    python main.py export clip EPISODE.h5 --steps 40-75 --out clip.mp4
    python main.py export clip EPISODE.h5 --steps 40-75 --out clip.gif --overlays step,thought --width 480
    python main.py export dataset RUN_DIR --format minari --out datasets/ --size 160x90

A clip is the pictures of a step range with overlays (step and action, thought, self-assessment
colour, trajectory inset, labels and interventions), at the game's own rate where continuous frames
were recorded. A dataset is a run's episodes in a format offline-RL and imitation-learning code reads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from core.export import ExportError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(title="what to export", dest="kind", metavar="KIND", required=True)
    clip = kinds.add_parser("clip", help="a video clip (.mp4 or .gif) of a step range, with overlays",
                            description="Write the pictures of a step range as an H.264 MP4 or a GIF, with overlays.")
    clip.add_argument("episode", type=Path, help="an episode file (.h5)")
    clip.add_argument("--steps", required=True, help="step numbers, inclusive: 40-75, 40 or 40- (to the end)")
    clip.add_argument("--out", type=Path, required=True, help="the clip: NAME.mp4 (H.264, needs the export extra) "
                                                             "or NAME.gif")
    clip.add_argument("--overlays", default="all",
                      help="comma list of step (number and action), thought, assessment (self-assessment colour), "
                           "trajectory (inset), labels (labels and interventions); or all (default) or none")
    clip.add_argument("--width", type=int, help="picture width in pixels (default 960 for MP4, 480 for GIF)")
    clip.add_argument("--thought-lines", type=int, default=3, help="lines of thought under the picture (default 3)")
    clip.add_argument("--fps", type=float, default=30.0, help="MP4 frame rate (default 30); timing follows the game")
    clip.add_argument("--step-seconds", type=float, default=0.5,
                      help="seconds per step where no continuous frames were recorded (default 0.5)")
    clip.add_argument("--speed", type=float, default=1.0, help="playback speed against the game's clock (default 1)")
    clip.add_argument("--no-frames", action="store_true", help="show only the step images, even where continuous "
                                                              "frames were recorded")
    clip.add_argument("--tick-hz", type=float, help="the game's ticks per second, for files that do not record it")
    clip.add_argument("--annotator", help="show only this annotator's labels (default: every annotator's)")
    clip.add_argument("--no-audio", action="store_true",
                      help="leave the recording's sound out of an MP4 (a GIF never has sound)")
    clip.set_defaults(kind_handler=_clip)
    dataset = kinds.add_parser("dataset", help="a run's episodes as a training dataset (Minari)",
                               description="Write a run's episodes as a Minari dataset: frames the agent saw, its "
                                           "actions, the Gymnasium wrapper's dense reward, terminations, truncations.")
    dataset.add_argument("folder", type=Path, help="a run folder (python main.py run --out) or a folder of .h5 files")
    dataset.add_argument("--format", choices=["minari", "lerobot"], default="minari",
                         help="minari (default); lerobot is not built in (the command says why)")
    dataset.add_argument("--out", type=Path, required=True,
                         help="a Minari datasets root: the dataset goes in OUT/NAMESPACE/NAME-vN; load it with "
                              "MINARI_DATASETS_PATH=OUT")
    dataset.add_argument("--name", help="the dataset id (default pokegym/<run folder name>-v0)")
    dataset.add_argument("--size", default="160x90", help="observation WIDTHxHEIGHT in pixels (default 160x90)")
    dataset.add_argument("--include-privileged", action="store_true",
                         help="also include privileged (scripted driver) episodes, which are left out by default")
    dataset.add_argument("--sparse-reward", action="store_true", help="reward only success (+10), not progress")
    dataset.add_argument("--jpeg", action="store_true", help="store observations JPEG-encoded (smaller, lossy)")
    dataset.add_argument("--tasks-dir", type=Path, action="append", default=[],
                         help="another folder of task YAML files (for episodes of tasks authored elsewhere)")
    dataset.add_argument("--audio", action="store_true",
                         help="observations also carry the sound before each picture (key \"audio\"; episodes "
                              "without sound are left out)")
    dataset.add_argument("--audio-seconds", type=float, default=1.0,
                         help="with --audio: the last this many seconds of the step before each picture (default 1)")
    dataset.add_argument("--author", help="the dataset's author (Minari metadata)")
    dataset.add_argument("--author-email", help="the author's contact (Minari metadata)")
    dataset.set_defaults(kind_handler=_dataset)


def run(args: argparse.Namespace) -> int:
    try:
        return int(args.kind_handler(args))
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _clip(args: argparse.Namespace) -> int:
    from core.export.clip import ClipOptions, export_clip
    from core.export.overlay import OverlayOptions, parse_overlays

    width = args.width or (480 if args.out.suffix.lower() == ".gif" else 960)
    options = ClipOptions(OverlayOptions(parse_overlays(args.overlays), width, args.thought_lines), args.fps,
                          args.step_seconds, args.speed, not args.no_frames, args.tick_hz, args.annotator,
                          not args.no_audio)
    started = time.perf_counter()
    last_report = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - last_report[0] >= 1.0:
            last_report[0] = now
            print(f"  {done}/{total} pictures", file=sys.stderr, flush=True)

    result = export_clip(args.episode, args.steps, args.out, options, progress)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    source = "continuous frames at the game's rate" if result.continuous else "step images"
    print(f"wrote {result.path}: steps {result.first_step}-{result.last_step}, {result.seconds:.1f} s, "
          f"{result.size[0]}x{result.size[1]}, {result.pictures} pictures from {source}"
          f"{', with sound (AAC)' if result.audio else ''} ({time.perf_counter() - started:.1f} s)")
    return 0


def _dataset(args: argparse.Namespace) -> int:
    from core.export.dataset import DatasetOptions, export_dataset, parse_size

    options = DatasetOptions(parse_size(args.size), args.include_privileged, args.name, args.jpeg,
                             not args.sparse_reward, tuple(args.tasks_dir), args.author, args.author_email, args.audio,
                             args.audio_seconds)

    def progress(done: int, total: int, path: str) -> None:
        print(f"  {done}/{total} {path}", file=sys.stderr, flush=True)

    result = export_dataset(args.folder, args.out, args.format, options, progress)
    for reason in result.skipped:
        print(f"left out: {reason}", file=sys.stderr)
    print(f"wrote {result.path}: {result.episodes} episode file(s) as {result.segments} Minari episode(s), "
          f"{result.steps} steps")
    print(f"load it with: MINARI_DATASETS_PATH={result.root} python -c \"import minari; "
          f"print(minari.load_dataset('{result.dataset_id}'))\"")
    return 0
