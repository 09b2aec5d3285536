"""The part of Panda3D's ShowBase that PokeGym's offscreen world renderer uses."""

from panda3d.core import GraphicsEngine, GraphicsOutput, GraphicsPipe, Lens, NodePath

class ShowBase:
    # Set when the (offscreen) window opens: by the constructor, or by openDefaultWindow.
    pipe: GraphicsPipe | None
    render: NodePath
    camera: NodePath
    camLens: Lens
    win: GraphicsOutput
    graphicsEngine: GraphicsEngine
    def __init__(self, fStartDirect: bool = True, windowType: str | None = None) -> None: ...
    def openDefaultWindow(self, *, type: str) -> bool: ...
    def disableMouse(self) -> None: ...
    def setBackgroundColor(self, r: float, g: float, b: float, a: float = 0.0) -> None: ...
    def destroy(self) -> None: ...
