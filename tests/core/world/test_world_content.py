"""The world file: the shipped town is what the issue promised, and bad files get clear messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.paths import DEFAULT_WORLD, PROJECT_ROOT
from core.world.content import WorldFileError, load_world
from core.world.layout import build_layout


@pytest.fixture(scope="module")
def town():
    return load_world(DEFAULT_WORLD)


def test_the_town_has_the_promised_content(town):
    x0, y0, x1, y1 = town.bounds
    assert (x1 - x0, y1 - y0) == (200, 200)
    assert len(town.buildings) >= 12
    assert len({b.color for b in town.buildings}) == len(town.buildings)
    assert len({b.roof.shape for b in town.buildings}) >= 4
    assert sum(b.sign is not None for b in town.buildings) >= 8
    kinds = {s.type for s in town.structures}
    assert {"clock_tower", "fountain", "bridge", "pier", "gate"} <= kinds
    assert any(h.height >= 8 for h in town.terrain.hills)
    assert {s.type for s in town.segments} >= {"fence", "hedge", "low_wall", "invisible_wall"}
    assert len(town.npcs) >= 8 and len({n.figure for n in town.npcs}) == len(town.npcs)
    assert len(town.interactables) >= 6
    assert {"item", "door", "sign", "lever"} <= {i.kind for i in town.interactables}


def test_every_start_state_stands_on_free_ground(town):
    layout = build_layout(town)
    for name, start in town.start_states.items():
        x, y = start.pos
        moved = layout.collision.move(x, y, 0.0, 0.0, town.character.radius, 0, layout.terrain.on_deck)
        assert moved == (x, y), f"start state {name} overlaps an obstacle"


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(WorldFileError, match="cannot read world file .*nowhere.yaml: No such file"):
        load_world(tmp_path / "nowhere.yaml")


def test_broken_yaml_is_reported_with_the_file(tmp_path):
    with pytest.raises(WorldFileError, match=r"world.yaml:1: not valid YAML: .*\(noticed at line 2\)"):
        load_world(_write(tmp_path, "buildings: [unclosed\n"))


def test_schema_errors_name_the_field(tmp_path):
    data = yaml.safe_load(DEFAULT_WORLD.read_text())
    data["buildings"][0]["roof"]["shape"] = "onion"
    data["npcs"][0]["dialogue"] = "no_such_dialogue"
    path = _write(tmp_path, data)
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1) if "shape: onion" in text)
    with pytest.raises(WorldFileError, match=rf"world.yaml:{line}: buildings\.0\.roof\.shape"):  # the file's line
        load_world(path)
    data["buildings"][0]["roof"]["shape"] = "gable"
    path = _write(tmp_path, data)
    with pytest.raises(WorldFileError, match="'baker' uses unknown dialogue 'no_such_dialogue'") as error:
        load_world(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "no_such_dialogue" in text)
    assert f"world.yaml:{line}: npcs.0.dialogue:" in str(error.value)


def test_the_world_command_refuses_a_bad_file_without_a_traceback(tmp_path):
    bad = _write(tmp_path, {"format_version": 1})
    result = subprocess.run([sys.executable, "main.py", "world", "--world", str(bad)], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "is not a valid world file" in result.stderr and "Traceback" not in result.stderr
    assert f"{bad}:1: name: Field required" in result.stderr


def _with_sound(tmp_path: Path, sound_yaml: str) -> Path:
    """The town's file with its sound section replaced by `sound_yaml` (so line numbers can be checked)."""
    text = DEFAULT_WORLD.read_text()
    return _write(tmp_path, text[:text.index("\nsound:")] + "\n" + sound_yaml)


def _line_of(path: Path, fragment: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if fragment in text)


def test_an_unknown_ground_surface_is_refused_with_file_and_line(tmp_path):
    path = _with_sound(tmp_path, "sound:\n  footsteps:\n    surfaces:\n      gravel: {noise_band: [500, 3000]}\n")
    with pytest.raises(WorldFileError, match="Input should be 'grass', 'asphalt', 'cobble', 'dirt', 'sand'") as error:
        load_world(path)
    assert f"world.yaml:{_line_of(path, 'gravel')}: sound.footsteps.surfaces.gravel:" in str(error.value)


def test_a_sound_source_outside_the_map_is_refused_with_file_and_line(tmp_path):
    path = _with_sound(tmp_path, "sound:\n  sources:\n    - {id: fountain, kind: fountain, pos: [0, 0]}\n"
                                 "    - {id: gulls, kind: gulls, pos: [130, 2]}\n")
    with pytest.raises(WorldFileError) as error:
        load_world(path)
    assert (f"world.yaml:{_line_of(path, '[130, 2]')}: sound.sources.1.pos: source 'gulls' is outside the map"
            in str(error.value))
    path = _with_sound(tmp_path, "sound:\n  sources:\n    - {id: brook, kind: water, follows: sea,\n"
                                 "       points: [[0, 0], [1, 1]]}\n")
    with pytest.raises(WorldFileError, match="exactly one of pos, points, area or follows") as error:
        load_world(path)
    assert f"world.yaml:{_line_of(path, 'brook')}: sound.sources.0" in str(error.value)


def test_the_town_sounds_of_its_places(town):
    kinds = {source.kind for source in town.sound.sources}
    assert {"water", "surf", "fountain", "gulls", "chatter", "bell"} <= kinds
    assert town.sound.rate % round(town.tick_hz) == 0 and town.sound.rate >= 22050
