"""Can Qt open a window here? Checked before a QApplication exists, because Qt cannot say so itself.

When a library of its platform plugin is missing, Qt prints a misleading line (since 6.5 it blames
libxcb-cursor0 whatever is actually missing) and aborts the process. This module reads the plugin's
ELF dependencies, follows them through the libraries PySide6 bundles, and tries to load every
system library they name, so the studio can print exactly which are missing and the `apt-get
install` line that provides them. No Qt is imported here.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

# Libraries whose Debian/Ubuntu package name does not follow the usual rule (see debian_package).
_PACKAGE_EXCEPTIONS = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0",
                       "libgobject-2.0.so.0": "libglib2.0-0", "libgio-2.0.so.0": "libglib2.0-0",
                       "libstdc++.so.6": "libstdc++6", "libgcc_s.so.1": "libgcc-s1", "libz.so.1": "zlib1g"}
_SYSTEM_BASE = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2"}
DT_NEEDED, SHT_DYNAMIC = 1, 6


@dataclass(frozen=True)
class PlatformProblem:
    """Why the studio's window cannot open, for the user."""

    platform: str
    missing: tuple[str, ...] = ()  # library file names that failed to load
    detail: str = ""               # a problem that is not a missing library (no X server, ...)

    @property
    def packages(self) -> list[str]:
        return sorted({debian_package(name) for name in self.missing})

    def install_line(self) -> str:
        sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
        return f"{sudo}apt-get install -y {' '.join(self.packages)}"

    def message(self) -> str:
        if not self.missing:
            return f"PokeGym Studio cannot open a window: {self.detail}"
        return (f"PokeGym Studio cannot open a window: Qt's {self.platform} platform plugin needs "
                f"{'a library that is' if len(self.missing) == 1 else 'libraries that are'} not installed: "
                f"{', '.join(self.missing)}.\n"
                f"On Debian or Ubuntu, install {'it' if len(self.packages) == 1 else 'them'} with:\n\n"
                f"    {self.install_line()}\n\n"
                "(Every other command works without a display; QT_QPA_PLATFORM=offscreen runs the studio "
                "with no window.)")


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package shipping a library: libxcb-icccm.so.4 -> libxcb-icccm4, libX11.so.6 ->
    libx11-6 (a hyphen goes before the version when the name ends in a digit), with known exceptions."""
    if soname in _PACKAGE_EXCEPTIONS:
        return _PACKAGE_EXCEPTIONS[soname]
    match = re.fullmatch(r"(.+?)\.so\.(\d+)(?:\.\d+)*", soname)
    if match is None:
        return soname.lower()
    name, version = match.group(1).lower(), match.group(2)
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def needed_libraries(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF file ([] for anything else)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    section_offset, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQII", data, section_offset + i * entry_size) for i in range(count)]
    needed = []
    for _name, kind, _flags, _addr, offset, size, link, _info in sections:
        if kind != SHT_DYNAMIC:
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                end = data.index(b"\0", strings + value)
                needed.append(data[strings + value:end].decode())
    return needed


def _try_load(soname: str) -> str | None:
    """None when the library loads; otherwise the name of the library that could not be found (the one
    asked for, or one it needs itself)."""
    try:
        ctypes.CDLL(soname)
    except OSError as exc:
        found = re.match(r"([^:\s]+\.so[.\d]*): cannot open shared object file", str(exc))
        return found.group(1) if found else soname
    return None


def missing_libraries(plugin: Path, bundled: Path) -> list[str]:
    """System libraries that the plugin needs, directly or through the Qt libraries in `bundled`, and
    that the dynamic loader cannot load."""
    missing: list[str] = []
    seen: set[str] = set()
    pending = [plugin]
    while pending:
        for soname in needed_libraries(pending.pop()):
            if soname in seen or soname in _SYSTEM_BASE:
                continue
            seen.add(soname)
            if (bundled / soname).exists():
                pending.append(bundled / soname)  # shipped with PySide6: look at what it needs in turn
                continue
            absent = _try_load(soname)
            if absent is not None and absent not in missing:
                missing.append(absent)
    return missing


def chosen_platform(environ: dict[str, str]) -> str | None:
    """The platform plugin Qt will pick on Linux: QT_QPA_PLATFORM's first choice, else wayland in a
    Wayland session and xcb under X11."""
    requested = environ.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if requested:
        return requested
    if environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    return "xcb" if environ.get("DISPLAY") else None


def plugin_folders(environ: dict[str, str]) -> tuple[list[Path], Path | None]:
    """Where Qt looks for platform plugins (the environment's choice first), and PySide6's own libraries."""
    folders = [Path(environ["QT_QPA_PLATFORM_PLUGIN_PATH"])] if environ.get("QT_QPA_PLATFORM_PLUGIN_PATH") else []
    folders += [Path(p) / "platforms" for p in environ.get("QT_PLUGIN_PATH", "").split(os.pathsep) if p]
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return folders, None
    qt = Path(next(iter(spec.submodule_search_locations))) / "Qt"
    return [*folders, qt / "plugins" / "platforms"], qt / "lib"


def _x_server_problem(display: str) -> str | None:
    """Whether an X server answers on `display` (libxcb is known to load by now)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    failed = xcb.xcb_connection_has_error(connection)
    xcb.xcb_disconnect(connection)
    if not failed:
        return None
    return (f"no X server answers on DISPLAY={display} (is it running, and may this user connect to it? "
            "Check XAUTHORITY, or start one with `Xvfb :1 &` and DISPLAY=:1).")


def platform_problem(environ: dict[str, str] | None = None) -> PlatformProblem | None:
    """Why Qt would abort instead of opening a window, or None when it should open one (or we cannot tell)."""
    environ = dict(os.environ if environ is None else environ)
    if not sys.platform.startswith("linux"):
        return None
    platform = chosen_platform(environ)
    if platform is None:
        return PlatformProblem("none", detail="no display: DISPLAY and WAYLAND_DISPLAY are unset. Run the studio in "
                               "a desktop session, under `xvfb-run python main.py`, or headless with "
                               "QT_QPA_PLATFORM=offscreen (no window is shown). Every command except the studio "
                               "works without a display.")
    if platform not in ("xcb", "wayland"):
        return None  # offscreen, minimal, vnc...: nothing outside the wheel to check
    folders, bundled = plugin_folders(environ)
    plugin = next((folder / f"libq{platform}.so" for folder in folders if (folder / f"libq{platform}.so").exists()),
                  None)
    if plugin is None or bundled is None:
        return None  # an unusual installation: let Qt speak for itself
    missing = missing_libraries(plugin, bundled)
    if missing:
        return PlatformProblem(platform, tuple(missing))
    if platform == "xcb":
        problem = _x_server_problem(environ.get("DISPLAY", ""))
        if problem is not None:
            return PlatformProblem(platform, detail=problem)
    return None
