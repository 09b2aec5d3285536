"""Issue 11, point 1: on a desktop where Qt's platform plugin cannot load, `python main.py` names the
missing libraries and the exact `apt-get install` line, instead of Qt aborting with a wrong guess.

The missing libraries are real: a copy of PySide6's own xcb plugin that needs a library no system
has, and (where this runs as root with mount namespaces) the system's libxcb-icccm4 and
libxcb-keysyms1 hidden from the studio's process alone, which is the fresh-desktop failure itself.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT
from studio.desktop_check import debian_package, missing_libraries, needed_libraries, plugin_folders
from tests.xserver import x_env, xvfb


def qt_dirs() -> tuple[Path, Path]:
    folders, bundled = plugin_folders({})
    assert bundled is not None
    return folders[-1], bundled


def run_studio(env: dict[str, str], prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "main.py"], cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_library_names_become_debian_package_names():
    assert [debian_package(name) for name in ("libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0",
                                              "libX11.so.6", "libxkbcommon-x11.so.0", "libglib-2.0.so.0",
                                              "libGL.so.1", "libxcb-render-util.so.0")] == \
        ["libxcb-icccm4", "libxcb-keysyms1", "libxcb-cursor0", "libx11-6", "libxkbcommon-x11-0", "libglib2.0-0",
         "libgl1", "libxcb-render-util0"]


def test_the_xcb_plugin_needs_the_libraries_that_were_missing_on_a_fresh_desktop():
    platforms, _ = qt_dirs()
    needed = needed_libraries(platforms / "libqxcb.so")
    assert {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0", "libQt6XcbQpa.so.6"} <= set(needed)


def broken_plugin(folder: Path) -> Path:
    """PySide6's xcb plugin, copied, needing libxcb-icccm.so.9 (which no system has) instead of .so.4."""
    platforms, _ = qt_dirs()
    data = (platforms / "libqxcb.so").read_bytes()
    assert data.count(b"libxcb-icccm.so.4\0") == 1
    copy = folder / "platforms" / "libqxcb.so"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(data.replace(b"libxcb-icccm.so.4\0", b"libxcb-icccm.so.9\0"))
    return copy


def test_a_missing_library_is_found_through_the_bundled_qt_libraries(tmp_path):
    plugin = broken_plugin(tmp_path)
    _, bundled = qt_dirs()
    assert missing_libraries(plugin, bundled) == ["libxcb-icccm.so.9"]


def test_the_studio_names_the_missing_library_and_its_install_line_instead_of_aborting(tmp_path):
    plugin = broken_plugin(tmp_path)
    _, bundled = qt_dirs()
    with xvfb() as display:
        # Qt is pointed at the broken plugin exactly as the studio's check is.
        result = run_studio(x_env(display, QT_QPA_PLATFORM_PLUGIN_PATH=str(plugin.parent),
                                  LD_LIBRARY_PATH=str(bundled)))
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "libxcb-icccm.so.9" in result.stderr and "apt-get install -y libxcb-icccm9" in result.stderr
    assert "Aborted" not in result.stderr and "could not be initialized" not in result.stderr


def library_folder(soname: str) -> str:
    """The real folder the dynamic loader takes `soname` from (after /lib -> /usr/lib links)."""
    ctypes.CDLL(soname)
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if os.path.basename(path).startswith(soname):
            return os.path.dirname(os.path.realpath(path))
    pytest.skip(f"{soname} is not loaded from a file")


def hide_libraries_command(folder: str, names: list[str], scratch: Path) -> tuple[str, ...]:
    """A private mount namespace in which `names` are gone from `folder` (an overlay); nothing else changes."""
    upper, work = scratch / "upper", scratch / "work"
    upper.mkdir()
    work.mkdir()
    removals = " ".join(f"{folder}/{name}*" for name in names)
    script = (f"mount -t overlay overlay -o lowerdir={folder},upperdir={upper},workdir={work} {folder} && "
              f"rm -f {removals} && exec \"$@\"")
    return ("unshare", "-m", "sh", "-c", script, "hide")


def test_on_a_desktop_without_libxcb_icccm4_and_keysyms1_the_studio_says_what_to_install(tmp_path):
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("hiding system libraries needs root and unshare (a private mount namespace)")
    folder = library_folder("libxcb-icccm.so.4")
    prefix = hide_libraries_command(folder, ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"], tmp_path)
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no overlay mounts in a private namespace here: {probe.stderr.strip()}")
    with xvfb() as display:
        result = run_studio(x_env(display), prefix)
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in result.stderr
    assert "apt-get install -y libxcb-icccm4 libxcb-keysyms1" in result.stderr
    assert "xcb-cursor0" not in result.stderr  # Qt's own guess, which was wrong


def test_a_display_with_no_x_server_behind_it_is_named(tmp_path):
    with xvfb() as display:
        number = int(display[1:]) + 50
    while Path(f"/tmp/.X11-unix/X{number}").exists():
        number += 1
    result = run_studio(x_env(f":{number}"))
    assert result.returncode == 2 and f"no X server answers on DISPLAY=:{number}" in result.stderr
