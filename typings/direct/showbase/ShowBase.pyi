"""The part of Panda3D's ShowBase that PokeGym's offscreen world renderer uses."""

from panda3d.core import GraphicsEngine, GraphicsOutput, Lens, NodePath

class ShowBase:
    # Set by the constructor when it opens the (offscreen) window, as it always does here.
    render: NodePath
    camera: NodePath
    camLens: Lens
    win: GraphicsOutput
    graphicsEngine: GraphicsEngine
    def __init__(self, fStartDirect: bool = True, windowType: str | None = None) -> None: ...
    def disableMouse(self) -> None: ...
    def setBackgroundColor(self, r: float, g: float, b: float, a: float = 0.0) -> None: ...
    def destroy(self) -> None: ...
