"""Backend files (assets/backends/*.yaml): the shipped ones load, and mistakes are reported with file and line."""

from __future__ import annotations

import pytest

from core.backends.profile import BackendFileError, known_backends, load_backend, parse_backend
from core.evaluation.profile import ProfileError, load_profile
from core.game.external.spec import PlaceholderError, Substitutions
from core.paths import ASSETS_DIR

BACKENDS = ASSETS_DIR / "backends"


def test_the_shipped_backends_load_with_their_memory_profiles():
    assert {"builtin", "minetest", "ryujinx"} <= set(known_backends())
    for name in known_backends():
        backend = load_backend(name)
        assert backend.memory_profile_path.exists(), name
        load_profile(backend.memory_profile_path)
    minetest = load_backend("minetest")
    assert minetest.kind == "external" and minetest.external.input.device == "xtest"
    assert load_profile(minetest.memory_profile_path).game_version == minetest.external.launch.version.expect
    assert load_backend("builtin").side_views.default == "turn"  # comparable with emulator runs by default


def test_a_mistake_is_reported_with_the_file_and_line(tmp_path):
    text = (BACKENDS / "minetest.yaml").read_text()
    broken = text.replace("    fps: 30\n", "    fps: fast\n").replace("device: xtest", "device: telepathy")
    path = tmp_path / "minetest.yaml"
    with pytest.raises(BackendFileError) as caught:
        parse_backend(broken, path)
    message = str(caught.value)
    fps_line = broken.splitlines().index("    fps: fast") + 1
    device_line = next(i for i, line in enumerate(broken.splitlines(), 1) if "telepathy" in line)
    assert f"{path}:{fps_line}: external.frames.fps" in message
    assert f"{path}:{device_line}: external.input.device" in message


def test_unknown_keys_bad_regexes_and_missing_sections_are_refused(tmp_path):
    text = (BACKENDS / "minetest.yaml").read_text()
    cases = {
        "unknown key": (text.replace("  display:", "  displya:"), "displya"),
        "bad title regex": (text.replace('window_title: "^Minetest 5\\\\.6\\\\.1"', 'window_title: "(unclosed"'),
                            "not a regular expression"),
        "no external section": (text.split("external:")[0].replace("kind: external", "kind: external"),
                                "needs an `external` section"),
        "a macro step with two kinds": (text.replace("macro: [{key: F2}]", "macro: [{key: F2, wait_s: 1}]"),
                                        "exactly one of"),
        "an unknown default start": (text.replace("default_start: spawn", "default_start: moon"), "moon"),
    }
    for what, (broken, expected) in cases.items():
        with pytest.raises(BackendFileError, match=expected):
            parse_backend(broken, tmp_path / "minetest.yaml")
        assert broken != text, what


def test_a_backend_named_wrongly_or_unknown_is_refused(tmp_path):
    with pytest.raises(BackendFileError, match="no backend named 'dreamcast'.*builtin"):
        load_backend("dreamcast")
    path = tmp_path / "other.yaml"
    path.write_text((BACKENDS / "builtin.yaml").read_text())
    with pytest.raises(BackendFileError, match="must match the file name"):
        load_backend(path)


def test_placeholders_are_filled_and_a_missing_environment_variable_is_named(monkeypatch):
    subs = Substitutions({"runtime": "/tmp/r", "port": "30001"})
    assert subs.fill("{runtime}/world --port {port}") == "/tmp/r/world --port 30001"
    monkeypatch.setenv("POKEGYM_TEST_GAME", "/games/za.nsp")
    assert subs.fill("{env:POKEGYM_TEST_GAME}") == "/games/za.nsp"
    monkeypatch.delenv("POKEGYM_TEST_GAME")
    with pytest.raises(PlaceholderError, match="POKEGYM_TEST_GAME"):
        subs.fill("{env:POKEGYM_TEST_GAME}")
    with pytest.raises(PlaceholderError, match="unknown placeholder"):
        subs.fill("{nonsense}")


def test_profile_fields_can_be_scaled_and_the_range_applies_to_the_scaled_value(tmp_path):
    import struct

    profile_text = (ASSETS_DIR / "profiles" / "minetest.yaml").read_text()
    profile = load_profile(ASSETS_DIR / "profiles" / "minetest.yaml")
    block = bytearray(profile.compiled_signature().values)
    struct.pack_into("<fff", block, 32, -1920.0, 46.25, 1280.0)  # Minetest keeps nodes x 10, y up
    struct.pack_into("<ff", block, 56, 12.0, -90.0)              # pitch (down), yaw
    values = profile.decode(bytes(block))
    assert (values["x"], values["y"], values["z"]) == pytest.approx((-192.0, 128.0, 4.625))
    assert values["camera_pitch"] == -12.0 and values["camera_yaw"] == -90.0
    broken = tmp_path / "flags_scaled.yaml"
    broken.write_text(profile_text.replace("flags: []", "flags: [a]\nflag_field: f").replace(
        "  facing:", "  f: {offset: 0, type: flags32, scale: 2.0}\n  facing:"))
    with pytest.raises(ProfileError, match="flag fields cannot be scaled"):
        load_profile(broken)


def test_run_with_an_unknown_backend_says_which_backends_exist(tmp_path):
    import subprocess
    import sys

    from core.paths import PROJECT_ROOT

    done = subprocess.run([sys.executable, "main.py", "run", "--backend", "dreamcast", "--out", str(tmp_path)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no backend named 'dreamcast'" in done.stderr and "minetest" in done.stderr


def test_hints_name_a_backend_by_the_name_only_where_the_name_finds_that_file(tmp_path):
    # A start that fails its check says `backend record-start ARG STATE`: for a file outside the folders names
    # are looked up in, the name alone would fail with "no backend named ...".
    from core.backends.profile import command_argument

    assert command_argument(load_backend("minetest")) == "minetest"
    copy = tmp_path / "minetest.yaml"
    copy.write_text((ASSETS_DIR / "backends" / "minetest.yaml").read_text())
    assert command_argument(load_backend(str(copy))) == str(copy)


def test_the_red_eclipse_example_loads_with_its_found_profile_and_its_task_validates():
    """docs/new-game.md's second game, kept as a user would keep it (a folder of its own, the task naming the
    backend file by path): the found profile loads as the backend's profile as written, and the task validates
    against it without the game (which CI does not install)."""
    import subprocess
    import sys

    from core.paths import PROJECT_ROOT

    folder = BACKENDS / "redeclipse"
    backend = load_backend(str(folder / "redeclipse.yaml"))
    assert backend.memory_profile_path == folder / "redeclipse_profile.yaml"
    profile = load_profile(backend.memory_profile_path)
    assert profile.signature is not None and profile.game_version == "1.6.0"
    done = subprocess.run([sys.executable, "main.py", "tasks", "validate", "--tasks", str(folder / "tasks")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 task file(s) valid" in done.stdout


def test_the_finder_rests_as_long_as_the_backends_game_needs_wherever_it_runs():
    """Red Eclipse slides on for about 0.7 s after a walk (step_settle_s: 1.0). The command line's finder rested that
    long; the studio's Find position rested the default 0.4 s, and its stand checks threw the true position out as
    noise. Both now take the plan from here; the built-in world (lockstep) keeps the default."""
    from core.finder.backends import finder_plan, resolve
    from core.finder.motion import MotionPlan

    redeclipse = load_backend(str(BACKENDS / "redeclipse" / "redeclipse.yaml"))
    assert finder_plan(redeclipse).settle_seconds == redeclipse.step_settle_s == 1.0
    assert finder_plan(load_backend("minetest")).settle_seconds == MotionPlan().settle_seconds  # 0.15 is less
    assert finder_plan(load_backend("builtin")) == MotionPlan()
    with resolve(str(BACKENDS / "redeclipse" / "redeclipse.yaml")) as backend:  # what the command line uses
        assert backend.plan == finder_plan(redeclipse)
