"""The sound banks' cache (core/world/sound/bank_cache.py): a world started again reads its banks from disk and
sounds the same, bit for bit; a damaged or foreign cache file is rebuilt, never trusted; worlds starting at
once never read a half-written file."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from core.game.pad import PadState
from core.paths import PROJECT_ROOT
from core.world.content import WorldSpec
from core.world.sound import bank_cache
from core.world.sound.bank_cache import cache_key, cache_path, cached_banks
from core.world.sound.banks import Banks, build_banks
from tests.core.world.sound_rig import sound_rig, town

# cobbles into grass, turning: footsteps, ambience and (after the wait) the bell
WALK = [(PadState(), 570), (PadState(left_y=1.0, right_x=0.3), 90), (PadState(left_x=1.0), 45)]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("POKEGYM_CACHE_DIR", str(folder))
    return folder


def _walk(folder: Path) -> np.ndarray:
    folder.mkdir()
    rig = sound_rig(folder)
    try:
        rig.start(-22, -24, -90)
        return rig.play(WALK)
    finally:
        rig.close()


def _digest(banks: Banks) -> str:
    digest = hashlib.sha256()
    for name, array in bank_cache._arrays(banks).items():  # pyright: ignore[reportPrivateUsage]
        digest.update(name.encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the times the banks are synthesized."""
    calls: list[int] = []

    def counted(spec: WorldSpec) -> Banks:
        calls.append(1)
        return build_banks(spec)

    monkeypatch.setattr(bank_cache, "build_banks", counted)
    return calls


def test_a_second_start_reads_the_cache_and_sounds_the_same(cache, tmp_path, monkeypatch):
    builds = _builds(monkeypatch)
    first = _walk(tmp_path / "first")
    assert builds == [1]
    [stored] = (cache / "sound-banks").glob("*.npz")
    second = _walk(tmp_path / "second")
    assert builds == [1], "the second world built its banks again"
    assert np.abs(first.astype(np.int32)).max() > 1000  # something was heard
    assert np.array_equal(first, second)
    assert _digest(cached_banks(town())) == _digest(build_banks(town()))
    assert list((cache / "sound-banks").iterdir()) == [stored]  # no temporary file left behind


@pytest.mark.parametrize("damage", ["flipped", "truncated", "empty", "foreign"])
def test_a_damaged_or_foreign_cache_file_is_rebuilt_with_a_warning(cache, monkeypatch, caplog, damage):
    spec = town()
    expected = _digest(cached_banks(spec))
    path = cache_path(spec, cache_key(spec))
    data = path.read_bytes()
    if damage == "flipped":  # a bit inside a sound's samples: the zip's CRC catches it
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1:])
    elif damage == "truncated":
        path.write_bytes(data[:len(data) // 3])
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # whole and readable, but made for other banks
        np.savez(path, **{bank_cache.KEY_ARRAY: np.array("0" * 32)}, **{"loops/stream": np.zeros(4, np.float32)})
    builds = _builds(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=bank_cache.__name__):
        rebuilt = cached_banks(spec)
    assert builds == [1]
    assert _digest(rebuilt) == expected
    assert any("damaged or does not match" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records)
    caplog.clear()
    assert _digest(cached_banks(spec)) == expected  # the file was written again, whole
    assert builds == [1] and not caplog.records


def test_an_unwritable_cache_folder_only_costs_the_build(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("POKEGYM_CACHE_DIR", str(blocker))
    with caplog.at_level(logging.WARNING, logger=bank_cache.__name__):
        assert _digest(cached_banks(town())) == _digest(build_banks(town()))
    assert any("could not write" in r.getMessage() for r in caplog.records)


_START = """
import hashlib, json, logging, sys
logging.basicConfig(level=logging.WARNING)
from core.paths import DEFAULT_WORLD
from core.world.content import load_world
from core.world.sound import bank_cache
spec = load_world(DEFAULT_WORLD)
sys.stdin.readline()  # all start together
digest = hashlib.sha256()
for name, array in bank_cache._arrays(bank_cache.cached_banks(spec)).items():
    digest.update(name.encode())
    digest.update(array.tobytes())
print(json.dumps(digest.hexdigest()))
"""


def test_worlds_starting_at_once_never_read_a_half_written_file(cache):
    """Four start-ups on an empty cache and then four more while the first ones may still be writing: every
    one gets the same banks, none finds a damaged file, and one whole file is left."""
    expected = _digest(build_banks(town()))
    env = {**os.environ, "POKEGYM_CACHE_DIR": str(cache)}
    starts = [subprocess.Popen([sys.executable, "-c", _START], cwd=PROJECT_ROOT, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(8)]
    for index, start in enumerate(starts):
        assert start.stdin is not None
        start.stdin.write("\n")
        start.stdin.flush()
        if index == 3:
            # the second four start as the first four write (their build takes about half a second)
            time.sleep(0.4)
    results = [start.communicate(timeout=120) for start in starts]
    for (out, err), start in zip(results, starts, strict=True):
        assert start.returncode == 0, err
        assert json.loads(out) == expected
        assert "damaged" not in err, err
    assert [p.suffix for p in (cache / "sound-banks").iterdir()] == [".npz"]
