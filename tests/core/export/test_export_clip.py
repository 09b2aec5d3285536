"""`python main.py export clip`: a real recorded episode (continuous frames, automatic push-backs, a human label)
as an H.264 MP4 that ffprobe reads at the game's own rate, as a GIF, with overlays a viewer can see; bad requests
get clear messages and a cancelled export leaves nothing behind."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading

import cv2
import numpy as np
import pytest
from PIL import Image

import main
from core.backends.profile import load_backend
from core.episode.synthetic import write_long_episode
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.export import ExportCancelled, ExportError
from core.export import video as video_module
from core.export.clip import ClipOptions, export_clip
from core.export.clip_data import load_clip_episode
from core.export.clip_plan import END_HOLD_S
from core.export.overlay import ASSESSMENT_RGB, OverlayOptions, OverlayRenderer, wrap_text
from core.game.builtin import BuiltinWorld
from core.labels.model import AnnotatorLabels, DeadlockLabel
from core.labels.store import save_labels
from core.paths import TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.interventions import InterventionPolicy
from core.session.runner import RunOptions
from tests.export_episodes import STUCK_REPLIES, record

TICK_HZ = 30


@pytest.fixture(scope="module")
def episode(tmp_path_factory, builtin_profile):
    """q02 into the park fence: frames every 5 ticks, push-backs after 3 ineffective moves, and alice's label."""
    path = tmp_path_factory.mktemp("clip") / "stuck.h5"
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)
    options = RunOptions(step_budget=18, frame_every_ticks=5, interventions=InterventionPolicy("physical", 3))
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        record(world, evaluator, actions, task, STUCK_REPLIES, path, options)
    save_labels(path, AnnotatorLabels("alice", spans=(DeadlockLabel(8, 15, kind="aware", awareness_step=13),)))
    return path


def probe(path) -> dict:
    if shutil.which("ffprobe") is None:
        pytest.skip("ffprobe is not installed (Debian package ffmpeg; .ci/run installs it)")
    fields = "stream=codec_name,pix_fmt,width,height,nb_read_frames,r_frame_rate:format=duration,format_name"
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-show_entries", fields, "-of", "json", str(path)],
                         capture_output=True, text=True, check=True)
    found = json.loads(out.stdout)
    return {**found["streams"][0], **found["format"]}


def decoded_frames(path) -> list[np.ndarray]:
    import av

    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def test_an_mp4_clip_is_h264_and_plays_at_the_games_rate(episode, tmp_path, capsys):
    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    out = tmp_path / "clip.mp4"
    assert main.main(["export", "clip", str(episode), "--steps", "5-16", "--out", str(out), "--overlays", "none"]) == 0
    assert "continuous frames at the game's rate" in capsys.readouterr().out
    with EpisodeReader(episode) as reader:
        numbers, ticks = reader.step_numbers(), reader.frame_ticks()
        start, end = int(numbers["tick_before"][4]), int(numbers["tick_after"][15])
        expected = (end - start) / TICK_HZ + END_HOLD_S
        info = probe(out)
        assert info["codec_name"] == "h264" and info["pix_fmt"] == "yuv420p" and "mp4" in info["format_name"]
        assert info["width"] == 960 and info["r_frame_rate"] == "30/1"
        assert abs(float(info["duration"]) - expected) < 0.05
        assert abs(int(info["nb_read_frames"]) - round(expected * 30)) <= 1
        # Output frame n shows what the game showed at tick start + n (30 ticks/s, 30 frames/s): the newest
        # picture taken by then, whether a step image or a continuous frame.
        frames = decoded_frames(out)
        pictures = {int(numbers["tick_before"][i]): reader.image("current", i) for i in range(4, 16)}
        pictures.update({int(t): reader.frame(j) for j, t in enumerate(ticks) if start < t <= end})
    moments = sorted(pictures)
    small = {t: thumbnail(scaled(picture, frames[0].shape)) for t, picture in pictures.items()}
    for n in range(0, len(frames) - 30, 5):
        shown = moments[np.searchsorted(moments, start + n, side="right") - 1]
        errors = {t: np.abs(small[t] - thumbnail(frames[n])).mean() for t in moments}
        assert errors[shown] < 6 and errors[shown] <= min(errors.values()) + 0.5, (n, shown, errors[shown])


def test_overlays_show_step_assessment_labels_intervention_inset_and_thought(episode):
    data = load_clip_episode(episode)
    position = 9  # step 10: MoveForward into the fence, inside alice's Aware span; a push-back follows it
    assert data.records[position].intervention is not None and data.records[position].intervention.kind == "push_back"
    with EpisodeReader(episode) as reader:
        picture = reader.image("current", position)
    stuck = 13  # step 14 says "stuck"
    renderer = OverlayRenderer(data, 4, 15, OverlayOptions(width=960), picture.shape)
    drawn = renderer.render(picture, stuck, int(data.tick_before[stuck]))
    width, frame_height = renderer.frame_size
    assert drawn.shape == (renderer.size[1], width, 3) and renderer.size[1] > frame_height  # caption below
    assert np.abs(drawn[frame_height // 2, 1].astype(int) - ASSESSMENT_RGB["stuck"]).max() < 30  # red border
    caption = drawn[frame_height:]
    assert (caption.max(axis=2) > 200).sum() > 500  # light text of the thought on the dark caption
    top_right = drawn[:80, width // 2:]
    assert _has_colour(top_right, (235, 135, 0))  # the Aware label badge
    plain = renderer.render(picture, position, int(data.tick_before[position]))
    assert _has_colour(plain[:120, width // 2:], (200, 0, 150))  # the intervention badge on step 10
    inset = drawn[frame_height // 2:frame_height, width * 2 // 3:]
    assert _has_colour(inset, (255, 140, 0))  # where the character is
    bare = OverlayRenderer(data, 4, 15, OverlayOptions(frozenset(), 960), picture.shape)
    assert bare.size == bare.frame_size  # no caption, nothing drawn over the game
    assert np.abs(bare.render(picture, stuck, 0).astype(int) - scaled(picture, (bare.size[1], 960))).max() <= 1


def scaled(picture: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The game picture at the clip's size, as the renderer scales it up."""
    return cv2.resize(picture, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)


def thumbnail(picture: np.ndarray) -> np.ndarray:
    return cv2.resize(picture.astype(np.uint8), (192, 108), interpolation=cv2.INTER_AREA).astype(int)


def _has_colour(region: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 25, pixels: int = 20) -> bool:
    return int((np.abs(region.astype(int) - rgb).max(axis=2) <= tolerance).sum()) >= pixels


def test_long_thoughts_wrap_within_the_picture_and_end_with_an_ellipsis():
    from core.export.fonts import load_font

    font = load_font(20)
    lines = wrap_text("word " * 200 + "x" * 300, font, 400, 3)
    assert len(lines) == 3 and lines[-1].endswith("…") and all(font.getlength(line) <= 400 for line in lines)
    assert wrap_text("a <b>tag</b> & more", font, 400, 3) == ["a <b>tag</b> & more"]


def test_a_gif_clip_keeps_the_clips_timing(episode, tmp_path):
    out = tmp_path / "clip.gif"
    result = export_clip(episode, "5-16", out, ClipOptions(OverlayOptions(width=480)))
    with Image.open(out) as gif:
        assert gif.format == "GIF" and gif.size[0] == 480 and gif.n_frames > 10
        total = 0
        for index in range(gif.n_frames):
            gif.seek(index)
            total += gif.info["duration"]
    assert abs(total / 1000 - result.seconds) < 0.05 and result.continuous


def test_without_continuous_frames_each_step_shows_for_step_seconds(tmp_path, capsys):
    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    frames = [np.full((36, 64, 3), 10 * i, np.uint8) for i in range(1, 11)]
    episode = write_long_episode(tmp_path / "old.h5", 10, frames, frames_per_step=2)  # no tick_hz recorded
    out = tmp_path / "steps.mp4"
    assert main.main(["export", "clip", str(episode), "--steps", "2-9", "--out", str(out), "--no-frames",
                      "--step-seconds", "0.25", "--width", "320"]) == 0
    info = probe(out)
    assert abs(float(info["duration"]) - 2.0) < 0.05 and int(info["nb_read_frames"]) == 60
    assert main.main(["export", "clip", str(episode), "--steps", "2-3", "--out", str(tmp_path / "f.mp4")]) == 0
    assert "assuming 30 ticks/s" in capsys.readouterr().err  # an older file: the assumption is said


@pytest.mark.parametrize(("args", "name", "message"), [
    (["--steps", "30-40"], "clip.gif", "this episode has steps 1-18"),
    (["--steps", "9-4"], "clip.gif", "runs backwards"),
    (["--steps", "five"], "clip.gif", "--steps must look like 40-75"),
    (["--steps", "1-3", "--overlays", "step,sparkles"], "clip.gif", "unknown overlay(s) sparkles"),
    (["--steps", "1-3"], "clip.avi", "ends in .mp4 (H.264 video) or .gif"),
])
def test_bad_requests_get_a_clear_message_and_write_nothing(episode, tmp_path, capsys, args, name, message):
    out = tmp_path / name
    assert main.main(["export", "clip", str(episode), *args, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_missing_or_foreign_file_is_named(tmp_path, capsys):
    out = str(tmp_path / "c.gif")
    assert main.main(["export", "clip", str(tmp_path / "nope.h5"), "--steps", "1", "--out", out]) == 2
    assert "nope.h5 does not exist" in capsys.readouterr().err
    foreign = tmp_path / "notes.h5"
    foreign.write_text("not hdf5")
    assert main.main(["export", "clip", str(foreign), "--steps", "1", "--out", out]) == 2
    assert "cannot open" in capsys.readouterr().err and not (tmp_path / "c.gif").exists()


def test_a_cancelled_export_leaves_no_file(episode, tmp_path):
    cancel = threading.Event()
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if done == 3:
            cancel.set()

    with pytest.raises(ExportCancelled, match="after 3 of"):
        export_clip(episode, "1-18", tmp_path / "clip.gif", progress=progress, cancel=cancel)
    assert seen == [1, 2, 3] and list(tmp_path.iterdir()) == []


def test_mp4_without_pyav_says_how_to_get_it(episode, tmp_path, monkeypatch):
    monkeypatch.setattr(video_module, "mp4_available", lambda: False)
    with pytest.raises(ExportError, match=r"needs PyAV: pip install -e \"\.\[export\]\".*\.gif"):
        export_clip(episode, "1-3", tmp_path / "clip.mp4")
    assert list(tmp_path.iterdir()) == []


def test_headless_chromium_decodes_the_mp4(episode, tmp_path):
    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
    result = export_clip(episode, "5-9", tmp_path / "clip.mp4")
    page = tmp_path / "page.html"
    page.write_text(  # the page reports what the browser's own decoder made of the file
        '<!DOCTYPE html><video id="v" src="clip.mp4" muted></video><p id="out">pending</p><script>'
        'const v = document.getElementById("v"), out = document.getElementById("out");'
        'v.addEventListener("loadeddata", () => { out.textContent = "loaded " + v.videoWidth + "x" + v.videoHeight'
        ' + " " + v.duration.toFixed(2); });'
        'v.addEventListener("error", () => { out.textContent = "error " + v.error.code; });</script>')
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--allow-file-access-from-files",
                          "--virtual-time-budget=8000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<p id="out">loaded (\d+)x(\d+) ([\d.]+)</p>', dom)
    assert found is not None, dom[-300:]
    assert (int(found[1]), int(found[2])) == result.size and abs(float(found[3]) - result.seconds) < 0.05


def test_the_trajectory_inset_leaves_the_bottom_to_an_open_dialogue_box(episode):
    import dataclasses

    data = load_clip_episode(episode)
    with EpisodeReader(episode) as reader:
        picture = reader.image("current", 5)
    options = OverlayOptions(frozenset({"trajectory"}), 960)
    renderer = OverlayRenderer(data, 4, 15, options, picture.shape)
    width, frame_height = renderer.frame_size
    bare = OverlayRenderer(data, 4, 15, OverlayOptions(frozenset(), 960), picture.shape).render(picture, 5, 0)

    def changed(drawn: np.ndarray) -> tuple[bool, bool]:  # (bottom right drawn over, top right drawn over)
        diff = np.abs(drawn.astype(int) - bare.astype(int)).max(axis=2) > 40
        return bool(diff[frame_height * 2 // 3:, width * 2 // 3:].any()), bool(diff[:frame_height // 3,
                                                                                     width * 2 // 3:].any())

    tick = int(data.tick_before[5])
    assert changed(renderer.render(picture, 5, tick)) == (True, False)  # walking: the inset at the bottom
    data.records[6] = dataclasses.replace(data.records[6], dialogue_open=True)  # step 6 opened a dialogue
    assert changed(renderer.render(picture, 5, tick)) == (False, True)  # the box's words stay readable


# -- sound (issue 22.4) ----------------------------------------------------------------------------------------
def decoded_sound(path) -> tuple[np.ndarray, int, float]:
    """The MP4's audio as float (frames, channels), its rate and its stream's duration in seconds; empty without one."""
    import av

    with av.open(str(path)) as container:
        if not container.streams.audio:
            return np.zeros((0, 2)), 0, 0.0
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "aac"
        duration = float(stream.duration * stream.time_base)
        pieces = [frame.to_ndarray() for frame in container.decode(audio=0)]  # planar float: (channels, n)
        return np.concatenate(pieces, axis=1).T, stream.rate, duration


def rms_per_tick(pcm: np.ndarray, rate: int, ticks: int) -> np.ndarray:
    per_tick = rate // TICK_HZ
    return np.sqrt((pcm[:ticks * per_tick].astype(float) ** 2).reshape(ticks, per_tick * pcm.shape[1]).mean(axis=1))


def test_an_mp4_clip_carries_the_recorded_sound_in_step_with_its_pictures(episode, tmp_path):
    from core.audio.onsets import detect_bumps
    from core.export.clip_audio import StepSound, TickSound

    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    out = tmp_path / "clip.mp4"
    result = export_clip(episode, "5-16", out, ClipOptions(OverlayOptions(frozenset(), 480)))
    assert result.audio and result.continuous
    with EpisodeReader(episode) as reader:
        numbers, index = reader.step_numbers(), reader.audio_index()
        start, end = int(numbers["tick_before"][4]), int(numbers["tick_after"][15])
        sound = TickSound([StepSound(reader.step_audio(i), int(index[i, 2]), int(index[i, 3])) for i in range(18)], 2)
    recorded = sound.ticks(start + 1, end)
    heard, rate, duration = decoded_sound(out)
    with __import__("av").open(str(out)) as container:
        video = container.streams.video[0]
        video_seconds = float(video.duration * video.time_base)
    assert abs(duration - video_seconds) <= 1 / 30  # the sound lasts as long as the pictures, to a frame
    assert abs(duration - result.seconds) <= 1 / 30
    # The same sound at the same moments: the loudness per tick (1/30 s) of the clip follows the recording's.
    ticks = end - start
    mine = rms_per_tick(recorded.astype(float) / 32768, 24000, ticks)
    theirs = rms_per_tick(heard, rate, ticks)
    assert np.corrcoef(mine, theirs)[0, 1] > 0.9
    bumps = detect_bumps(recorded, 24000)  # walking into the park fence
    assert bumps, "the recording should hold the bumps of the fence"
    in_clip = detect_bumps((np.clip(heard, -1, 1) * 32767).astype(np.int16), rate)
    for bump in bumps:  # each one heard in the clip where the recording has it (AAC's priming: a few ms)
        assert any(abs(found.time_s - bump.time_s) < 0.06 for found in in_clip), (bump, in_clip)
    for bump in bumps:  # as loud in the clip as in the recording around each bump, not silent
        near = slice(max(0, int(bump.time_s * TICK_HZ) - 3), int(bump.time_s * TICK_HZ) + 4)
        assert theirs[near].max() > 0.7 * mine[near].max() > 0.01


def test_no_audio_and_other_speeds(episode, tmp_path):
    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    silent = tmp_path / "silent.mp4"
    assert main.main(["export", "clip", str(episode), "--steps", "5-8", "--out", str(silent), "--overlays", "none",
                      "--width", "320", "--no-audio"]) == 0
    assert decoded_sound(silent)[2] == 0.0  # no audio stream at all
    fast = tmp_path / "fast.mp4"
    result = export_clip(episode, "5-8", fast, ClipOptions(OverlayOptions(frozenset(), 320), speed=2.0))
    heard, _, duration = decoded_sound(fast)
    assert abs(duration - result.seconds) <= 1 / 30 and np.abs(heard).max() > 0.01
    steps = tmp_path / "steps.mp4"  # step images, 0.5 s each, whatever each step's own length: sound fitted to them
    result = export_clip(episode, "5-8", steps, ClipOptions(OverlayOptions(frozenset(), 320), use_frames=False))
    assert abs(decoded_sound(steps)[2] - result.seconds) <= 1 / 30 and result.seconds == pytest.approx(2.0)


def test_a_step_with_damaged_sound_is_silent_in_the_clip_and_the_rest_plays(episode, tmp_path):
    from tests.damaged_files import flip_chunk

    pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    damaged = tmp_path / "damaged.h5"
    shutil.copyfile(episode, damaged)
    with EpisodeReader(damaged) as reader:
        index, numbers = reader.audio_index(), reader.step_numbers()
    flip_chunk(damaged, "audio/pcm", (int(index[5, 0]), 0, 0))  # its first row: the whole step's sound is lost
    out = tmp_path / "clip.mp4"
    result = export_clip(damaged, "5-8", out, ClipOptions(OverlayOptions(frozenset(), 320)))
    assert result.audio and any(note.startswith("damaged audio at step 6") for note in result.notes)
    heard, rate, duration = decoded_sound(out)
    assert abs(duration - result.seconds) <= 1 / 30
    start = int(numbers["tick_before"][4])
    begins, ends = ((int(t) - start) / TICK_HZ for t in (index[5, 2] - 1, index[5, 3]))
    margin = 0.05  # AAC's frames smear an edge by a few tens of milliseconds
    inside = heard[round((begins + margin) * rate):round((ends - margin) * rate)]
    before = heard[:round((begins - margin) * rate)]
    assert len(inside) and np.abs(inside).max() < 1e-3  # step 6 is silent
    assert np.abs(before).max() > 0.01  # step 5 plays
