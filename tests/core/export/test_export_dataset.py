"""`python main.py export dataset RUN --format minari`: real recorded episodes written with Minari's own
writer, read back with Minari's own loader, and checked against the episode files: frames, actions, the
shared dense reward, terminations, truncations, segments cut at human and intervention steps, and privileged
episodes left out unless asked for."""

from __future__ import annotations

import math

import h5py
import numpy as np
import pytest

import main
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.export.trajectory import resize
from core.game.builtin import BuiltinWorld
from core.game.pad import PadState
from core.paths import TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.reward import FLAG_BONUS, SUCCESS_BONUS, Reading, RewardSpec, step_reward
from core.session.runner import RunOptions
from tests.export_episodes import SHORT_TASK, STUCK_REPLIES, record

minari = pytest.importorskip("minari", reason="Minari datasets need the export extra")

BACK = '{"thought": "Back toward the fountain.", "self_assessment": "progressing", "action": "MoveBackward"}'


@pytest.fixture(scope="module")
def run(tmp_path_factory, builtin_profile):
    """A success on a task authored outside the suite, a stuck episode with a person's push and a person's
    steps in the middle, and a privileged (scripted) success."""
    root = tmp_path_factory.mktemp("dataset")
    tasks, episodes = root / "tasks", root / "run"
    tasks.mkdir()
    episodes.mkdir()
    (tasks / "t_short_walk.yaml").write_text(SHORT_TASK)
    actions = load_backend("builtin").action_set()
    short = load_task(tasks / "t_short_walk.yaml", builtin_profile.flags)
    stuck = load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)

    def interruptions(runner):  # queued while the agent decides steps 6 and 10: they run as steps 7 and 11
        return {6: lambda: runner.request_intervention("push_back"),
                9: lambda: runner.human_input(PadState(left_y=-1.0), 0.5)}

    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        won = record(world, evaluator, actions, short, [BACK] * 4, episodes / "a_success.h5",
                     RunOptions(step_budget=8, frame_every_ticks=5))
        record(world, evaluator, actions, stuck, STUCK_REPLIES, episodes / "b_stuck.h5", RunOptions(step_budget=14),
               interruptions)
        record(world, evaluator, actions, short, [BACK] * 4, episodes / "c_privileged.h5",
               RunOptions(step_budget=8, privileged=True))
    assert won.success, "the short task must be solvable by walking back"
    return root


def export(run, out, *extra) -> int:
    return main.main(["export", "dataset", str(run / "run"), "--out", str(out), "--tasks-dir", str(run / "tasks"),
                      *extra])


def by_file(dataset) -> dict[str, list]:
    found: dict[str, list] = {}
    for episode, meta in zip(dataset.iterate_episodes(), dataset.storage.get_episode_metadata(dataset.episode_indices)):
        found.setdefault(meta["source_file"].rsplit("/", 1)[-1], []).append((episode, meta))
    return found


def test_minari_loads_the_dataset_and_it_matches_the_episode_files(run, tmp_path, monkeypatch, capsys):
    out = tmp_path / "datasets"
    assert export(run, out, "--name", "pokegym/walks-v0") == 0
    printed = capsys.readouterr()
    assert "c_privileged.h5: privileged (scripted driver) episode" in printed.err
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset("pokegym/walks-v0")  # Minari's own loader
    assert dataset.observation_space.shape == (90, 160, 3) and dataset.action_space.n == 12
    names = dataset.storage.metadata["pokegym"]["action_names"]
    assert names[-1] == "NoOp" and dataset.storage.metadata["pokegym"]["tasks"] == ["q02_badge_interaction",
                                                                                    "t_short_walk"]
    files = by_file(dataset)
    assert set(files) == {"a_success.h5", "b_stuck.h5"} and dataset.total_episodes == 4

    (won, meta), = files["a_success.h5"]
    assert meta["task_id"] == "t_short_walk" and meta["granularity"] == "goal_only"
    with EpisodeReader(run / "run" / "a_success.h5") as reader:
        first_image = reader.image("current", 0)
        records, numbers, result = reader.records(), reader.step_numbers(), reader.result
        samples = reader.samples()
    steps = result["success_step"]
    assert np.array_equal(won.observations[0], resize(first_image, (160, 90)))  # lossless by default
    assert [names[a] for a in won.actions] == [r["action"] for r in records] == ["MoveBackward"] * steps
    assert won.terminations.tolist() == [False] * (steps - 1) + [True] and not won.truncations.any()
    # the dense reward, recomputed here from the evaluator's samples: metres toward the goal, +10 on success
    goal = (0.0, 5.5)

    def distance(tick: int) -> float:
        at = np.searchsorted(samples["tick"], tick, side="right") - 1
        assert at >= 0, "every recording holds the sample where it starts"
        return math.hypot(samples["x"][at] - goal[0], samples["y"][at] - goal[1])

    expected = [distance(b) - distance(a) for b, a in zip(numbers["tick_before"], numbers["tick_after"])]
    expected[-1] += SUCCESS_BONUS
    assert np.allclose(won.rewards, expected, atol=1e-4) and won.rewards[-1] > SUCCESS_BONUS
    assert meta["final_observation"] == "continuous frame" and meta["start_reading"] == "recorded"

    pieces = sorted(files["b_stuck.h5"], key=lambda item: item[1]["first_step"])
    assert [(m["first_step"], m["last_step"]) for _, m in pieces] == [(1, 6), (8, 10), (12, 14)]
    with h5py.File(run / "run" / "b_stuck.h5") as raw:  # plain h5py: the sources really are as cut
        sources = raw["steps/table"]["source"][:].tolist()
    assert sources[6] == 2 and sources[10] == 1  # step 7 an intervention, step 11 human
    first_piece, meta = pieces[0]
    assert first_piece.truncations.tolist() == [False] * 5 + [True] and not first_piece.terminations.any()
    assert first_piece.infos["step"].tolist() == [1, 2, 3, 4, 5, 6, -1]  # no later picture: step 7 had none
    assert meta["final_observation"].startswith("repeated") and meta["ended_by"] == "a person or intervention"
    assert pieces[1][0].infos["step"].tolist() == [8, 9, 10, 11]  # step 11's frame shows where step 10 ended


def test_privileged_episodes_are_added_only_when_asked(run, tmp_path, monkeypatch):
    out = tmp_path / "datasets"
    assert export(run, out, "--name", "pokegym/all-v0", "--include-privileged", "--size", "64x36") == 0
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.MinariDataset(out / "pokegym" / "all-v0" / "data")
    files = by_file(dataset)
    assert "c_privileged.h5" in files and dataset.observation_space.shape == (36, 64, 3)
    (scripted, _), = files["c_privileged.h5"]
    assert scripted.terminations[-1] and scripted.observations.shape[1:] == (36, 64, 3)


def test_an_existing_dataset_lerobot_and_a_folder_with_nothing_to_export_get_clear_answers(run, tmp_path, capsys):
    out = tmp_path / "datasets"
    assert export(run, out, "--name", "pokegym/once-v0") == 0
    capsys.readouterr()
    assert export(run, out, "--name", "pokegym/once-v0") == 2
    assert "already exists; Minari never overwrites a dataset" in capsys.readouterr().err
    assert export(run, out, "--format", "lerobot") == 2
    assert "PyTorch" in capsys.readouterr().err
    only_privileged = tmp_path / "only"
    only_privileged.mkdir()
    (only_privileged / "c.h5").write_bytes((run / "run" / "c_privileged.h5").read_bytes())
    assert main.main(["export", "dataset", str(only_privileged), "--out", str(out)]) == 2
    assert "no episode" in capsys.readouterr().err and not (out / "pokegym" / "only-v0").exists()


def test_an_episode_of_an_unknown_task_names_the_option_and_leaves_no_dataset(run, tmp_path, capsys):
    out = tmp_path / "datasets"
    assert main.main(["export", "dataset", str(run / "run"), "--out", str(out), "--name", "pokegym/x-v0"]) == 2
    message = capsys.readouterr().err
    assert "task 't_short_walk'" in message and "--tasks-dir" in message
    assert not (out / "pokegym" / "x-v0").exists()


def test_the_dense_reward_is_progress_plus_new_relevant_flags_plus_success(builtin_profile):
    task = load_task(TASKS_DIR / "q04_clock_interaction.yaml", builtin_profile.flags)
    spec = RewardSpec.for_task(task, builtin_profile.flags)
    goal = task.goal_point()[:2]
    assert spec.goal == goal and spec.relevant_bits
    bit = spec.relevant_bits[0]
    before = Reading(goal[0] + 5, goal[1], 0)
    after = Reading(goal[0] + 2, goal[1], 1 << bit)
    assert step_reward(spec, before, after, False) == pytest.approx(3 + FLAG_BONUS)
    assert step_reward(spec, after, before, False) == pytest.approx(-3)  # a flag already set earns nothing again
    assert step_reward(RewardSpec(goal, spec.relevant_bits, dense=False), before, after, True) == SUCCESS_BONUS


def test_a_damaged_episode_is_named_and_no_dataset_is_left(run, tmp_path, capsys):
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    source = run / "run" / "b_stuck.h5"
    with h5py.File(source) as raw:  # where step 3's image is stored
        chunk = raw["images/current"].id.get_chunk_info(2)
    data = bytearray(source.read_bytes())
    data[chunk.byte_offset:chunk.byte_offset + chunk.size] = bytes(chunk.size)  # a disk error zeroed it
    (damaged / "b_stuck.h5").write_bytes(bytes(data))
    out = tmp_path / "datasets"
    assert main.main(["export", "dataset", str(damaged), "--out", str(out), "--name", "pokegym/d-v0"]) == 2
    message = capsys.readouterr().err
    assert "b_stuck.h5" in message and "left unchanged" in message
    assert not (out / "pokegym" / "d-v0").exists()
    assert (damaged / "b_stuck.h5").read_bytes() == bytes(data)


def test_audio_is_an_observation_key_holding_the_sound_before_each_picture(run, tmp_path, monkeypatch, capsys):
    from core.episode import load_episode

    out = tmp_path / "datasets"
    assert export(run, out, "--name", "pokegym/heard-v0", "--audio", "--audio-seconds", "0.25") == 0
    capsys.readouterr()
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset("pokegym/heard-v0")
    space = dataset.observation_space
    assert set(space.spaces) == {"image", "audio"} and space["audio"].shape == (6000, 2)  # 0.25 s at 24 kHz
    assert space["audio"].dtype == np.int16 and space["image"].shape == (90, 160, 3)
    assert dataset.storage.metadata["pokegym"]["audio"]["rate"] == 24000
    pieces = sorted(by_file(dataset)["b_stuck.h5"], key=lambda item: item[1]["first_step"])
    recorded = load_episode(run / "run" / "b_stuck.h5")
    for piece, meta in pieces:
        sound, real = piece.observations["audio"], piece.infos["audio_frames"]
        assert sound.shape == (len(piece.actions) + 1, 6000, 2)
        for k in range(len(sound)):
            position = meta["first_step"] - 1 + k  # the observation of this step position: after the step before it
            before = recorded.step_audio(position - 1) if position >= 1 else None
            if before is None:
                assert real[k] == 0 and not sound[k].any()
                continue
            tail = before.samples[-6000:]
            assert real[k] == len(tail) and np.array_equal(sound[k][6000 - len(tail):], tail)
    first, _ = pieces[0]
    assert first.infos["audio_frames"][0] == 0 and first.infos["audio_frames"][1] == 6000  # nothing before step 1
    assert np.abs(np.concatenate(list(first.observations["audio"]))).max() > 1000  # the world's sound, not silence


def test_audio_leaves_out_episodes_recorded_without_sound(run, tmp_path, capsys):
    import shutil

    folder = tmp_path / "mixed"
    (folder / "run").mkdir(parents=True)
    shutil.copytree(run / "tasks", folder / "tasks")
    for name in ("a_success.h5", "b_stuck.h5"):
        shutil.copyfile(run / "run" / name, folder / "run" / name)
    with h5py.File(folder / "run" / "a_success.h5", "r+") as file:  # as a world with its sound off writes it
        del file["audio"]
    assert export(folder, tmp_path / "datasets", "--name", "pokegym/some-v0", "--audio") == 0
    assert "a_success.h5: recorded without sound" in capsys.readouterr().err
    assert export(folder, tmp_path / "datasets", "--name", "pokegym/bad-v0", "--audio", "--audio-seconds", "0") == 2
    assert "--audio-seconds must be in (0, 60]" in capsys.readouterr().err
