"""Profiles: both shipped profiles load; bad ones are refused with the field named."""

from __future__ import annotations

import struct
import zlib

import pytest
import yaml

from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import Profile, ProfileError, load_profile
from core.game.errors import GameStartError
from core.paths import PROFILES_DIR


def _write(tmp_path, data):
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_template_loads_but_refuses_to_scan():
    template = load_profile(PROFILES_DIR / "ryujinx_legends_za.yaml")
    assert template.status == "template" and template.signature is None
    assert template.scan_regions.path_contains == "/dev/shm/Ryujinx"
    with pytest.raises(ProfileError, match="is a template: fill in its signature and field offsets"):
        template.compiled_signature()


def test_the_evaluator_will_not_start_on_a_template(world):
    with pytest.raises(GameStartError, match="is a template"):
        EvaluatorClient.launch(world.pid, PROFILES_DIR / "ryujinx_legends_za.yaml")


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["fields"]["x"].update(type="f64"), r"fields\.x\.type: Input should be 'u8'"),
    (lambda d: d["fields"]["x"].update(offset=62), "field 'x' ends at byte 66, past block_size 64"),
    (lambda d: d["fields"]["x"].update(offset=None), "field 'x' has no offset; only a template may leave it open"),
    (lambda d: d["signature"].update(pattern="50 4B ZZ"), r"signature\.pattern: .*token 3 \('ZZ'\)"),
    (lambda d: d.update(flag_field="flagz"), "unknown field 'flagz' referenced"),
    (lambda d: d.update(colour="red"), "colour: unknown key; the top level takes format_version, "),
    (lambda d: d.update(signature=None), "a working profile needs a signature or a pointer root"),
    (lambda d: d["fields"]["x"].update(offset=60, pointer_chain=[0x10]), "field 'x' ends at byte 68, past block_size"),
    (lambda d: d["fields"]["x"].update(scale=0), "field 'x' has scale 0"),
    (lambda d: d.update(pointer={"module": "", "offset": 0}), r"pointer\.module: String should have at least 1"),
])
def test_bad_profiles_name_the_problem(tmp_path, change, message):
    data = yaml.safe_load((PROFILES_DIR / "builtin_world.yaml").read_text())
    change(data)
    with pytest.raises(ProfileError, match=message):
        load_profile(_write(tmp_path, data))


def test_unreadable_and_non_mapping_profiles(tmp_path):
    with pytest.raises(ProfileError, match="cannot read profile"):
        load_profile(tmp_path / "missing.yaml")
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ProfileError, match="must hold a mapping"):
        load_profile(path)


def test_scale_applies_before_the_range_check():
    data = yaml.safe_load((PROFILES_DIR / "builtin_world.yaml").read_text())
    data["fields"]["x"].update(scale=0.1, range=[-5, 5])
    profile = Profile.model_validate(data)
    body = bytes.fromhex("504B47594D5AA501") + struct.pack("<HHIQffffffQHBB", 2, 64, 1, 7, 40.0, -9.0, 0.0, 0.0,
                                                            0.0, -12.0, 0, 0, 0, 0)
    raw = body + struct.pack("<I", zlib.crc32(body))
    assert profile.decode(raw)["x"] == pytest.approx(4.0)  # 40 stored, 4 in the sample: inside [-5, 5]
