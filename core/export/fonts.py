"""Fonts for pictures drawn outside Qt (clip overlays, report thumbnails)."""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@lru_cache(maxsize=32)
def load_font(size: int, bold: bool = False) -> Font:
    """A TrueType font the system has (DejaVu, Noto, Arial...), else Pillow's built-in one."""
    names = (("DejaVuSans-Bold.ttf", "NotoSans-Bold.ttf", "arialbd.ttf", "Arial Bold.ttf") if bold else ()) + \
        ("DejaVuSans.ttf", "NotoSans-Regular.ttf", "arial.ttf", "Arial.ttf", "segoeui.ttf")
    for name in names:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size)
