"""Panda3D start-up: software rendering offscreen by default, hardware OpenGL on request."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from panda3d.core import GraphicsPipe

RendererChoice = Literal["auto", "software", "hardware"]


def _gpu_present() -> bool:
    return any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/dri/renderD128")) or os.name == "nt"


def configure(width: int, height: int, renderer: RendererChoice) -> str:
    """Load Panda3D's config for an offscreen buffer. Returns the display module chosen."""
    from panda3d.core import GraphicsPipeSelection, loadPrcFileData

    module = "p3tinydisplay"
    if renderer == "hardware" or (renderer == "auto" and _gpu_present()):
        loadPrcFileData("pokegym-probe", "notify-level error\n")
        pipe = GraphicsPipeSelection.getGlobalPtr().makeModulePipe("pandagl")
        if pipe is not None and pipe.isValid():
            module = "pandagl"
        elif renderer == "hardware":
            raise RuntimeError(
                "hardware OpenGL was requested but Panda3D's pandagl module could not open a pipe; "
                "install the GPU driver's OpenGL libraries or use --renderer software"
            )
    loadPrcFileData(
        "pokegym-world",
        "\n".join([
            f"load-display {module}",
            "window-type offscreen",
            f"win-size {width} {height}",
            "audio-library-name null",
            "sync-video 0",
            "notify-level error",
            "notify-level-display fatal",  # probing for X11 and /dev/input is expected to fail headless
            "notify-level-device fatal",
            "default-directnotify-level error",
            "framebuffer-multisample 0",
            "want-pstats 0",
        ]),
    )
    return module


def offscreen_pipe(module: str) -> GraphicsPipe:
    """The pipe the world draws with. Software frames come from tinydisplay's offscreen pipe, named: its default
    pipe is the X one, which opens $DISPLAY or else ":0.0", and an X server there that goes away (a test's or
    a closed session's Xvfb on :0) killed worlds with a fatal X error, at start-up or at exit."""
    from panda3d.core import GraphicsPipeSelection, TypeRegistry

    selection = GraphicsPipeSelection.getGlobalPtr()
    if module == "p3tinydisplay":
        selection.loadAuxModules()
        pipe = selection.makePipe(TypeRegistry.ptr().findType("TinyOffscreenGraphicsPipe"))
    else:
        pipe = selection.makeModulePipe(module)
    if pipe is None or not pipe.isValid():
        raise RuntimeError(f"Panda3D's {module} module could not make a graphics pipe")
    return pipe

