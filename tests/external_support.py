"""Shared pieces for the external-game tests: our own Xvfb, a look at which keys the X server holds down."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator

import pytest

from core.game.external.x11 import XTestDevice
from core.game.external.xvfb import Xvfb


def _missing() -> str | None:
    if shutil.which("Xvfb") is None:
        return "Xvfb is not installed (.ci/run installs it)"
    for module in ("Xlib", "mss"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed: pip install -e '.[external]'"
    return None


if _missing() and os.environ.get("POKEGYM_REQUIRE_MINETEST"):
    raise RuntimeError(f"POKEGYM_REQUIRE_MINETEST is set but {_missing()}")
needs_x11_tools = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(scope="module")
def xvfb() -> Iterator[Xvfb]:
    server = Xvfb.start("1280x720x24")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def on_display(xvfb: Xvfb, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point $DISPLAY at the module's Xvfb (backends with `xvfb: never` use it)."""
    monkeypatch.setenv("DISPLAY", xvfb.display)
    return xvfb.display


def keys_down(display: str) -> set[int]:
    device = XTestDevice(display)
    try:
        return device.keys_down()
    finally:
        device.close()


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def pid_running(pid: int) -> bool:
    from core.game.child import pid_alive

    return pid_alive(pid)


def events(path: os.PathLike[str] | str) -> list[str]:
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []
