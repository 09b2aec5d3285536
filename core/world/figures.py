"""People: the player character and the NPCs, built from simple solids so each is distinct."""

from __future__ import annotations

import numpy as np

from core.world.content import Figure
from core.world.meshes import MeshBuilder, rotation_z

PLAYER_FIGURE = Figure(
    body=(0.15, 0.35, 0.85), legs=(0.15, 0.15, 0.2), hat="cap", hat_color=(0.9, 0.1, 0.1),
    accessory="backpack", accessory_color=(0.95, 0.75, 0.1), height=1.7,
)


def build_figure(builder: MeshBuilder, figure: Figure, x: float, y: float, z: float, heading: float) -> None:
    """A figure standing at (x, y, z) facing `heading`; local +y is the front."""
    positions, normals, colors, uvs, triangles = figure_mesh(figure).arrays()
    rot = rotation_z(heading)
    builder.add(positions @ rot.T + np.array([x, y, z]), normals @ rot.T, colors, uvs, triangles)


def figure_mesh(figure: Figure) -> MeshBuilder:
    local = MeshBuilder()
    _figure_local(local, figure)
    return local


def _figure_local(b: MeshBuilder, f: Figure) -> None:
    s = f.height / 1.75
    w = f.build
    leg_h = 0.8 * s
    torso_h = 0.6 * s
    head_r = 0.14 * s + 0.02
    if f.lower == "pants":
        for side in (-1, 1):
            b.box((side * 0.1 * w, 0, 0), (0.14 * w, 0.16, leg_h), 0, f.legs)
    elif f.lower == "skirt":
        for side in (-1, 1):
            b.box((side * 0.08 * w, 0, 0), (0.1, 0.12, leg_h), 0, f.skin)
        b.cylinder((0, 0, leg_h * 0.35), 0.3 * w, leg_h * 0.7, f.legs, segments=10, top_radius=0.2 * w)
    else:  # robe
        b.cylinder((0, 0, 0), 0.3 * w, leg_h + 0.05, f.legs, segments=10, top_radius=0.2 * w)
    body_base = leg_h
    b.cylinder((0, 0, body_base), 0.2 * w, torso_h, f.body, segments=10, top_radius=0.17 * w, squash=(1.0, 0.7))
    for side in (-1, 1):
        b.box((side * 0.25 * w, 0, body_base + 0.05 * s), (0.09, 0.1, torso_h * 0.9), 0, f.body)
        b.box((side * 0.25 * w, 0, body_base - 0.05 * s), (0.08, 0.08, 0.12 * s), 0, f.skin)
    head_z = body_base + torso_h + head_r * 0.9
    b.sphere((0, 0, head_z), head_r, f.skin, rings=5, segments=10)
    # Eyes and a nose on the front (+y) so the facing direction reads at a glance.
    for side in (-1, 1):
        b.box((side * head_r * 0.38, head_r * 0.9, head_z + head_r * 0.1), (0.04, 0.03, 0.05), 0, (0.08, 0.08, 0.1))
    _hat(b, f, head_z, head_r)
    _accessory(b, f, body_base, torso_h, s, w)


def _hat(b: MeshBuilder, f: Figure, head_z: float, r: float) -> None:
    top = head_z + r * 0.7
    if f.hat == "cap":
        b.sphere((0, 0, head_z + r * 0.15), r * 1.05, f.hat_color, rings=3, segments=10, hemisphere=True)
        b.box((0, r * 0.9, head_z + r * 0.3), (r * 1.4, r * 0.9, 0.03), 0, f.hat_color)
    elif f.hat == "cone":
        b.cylinder((0, 0, top - 0.05), r * 1.0, r * 3.0, f.hat_color, segments=10, top_radius=0.0)
    elif f.hat == "top":
        b.cylinder((0, 0, top - 0.03), r * 1.2, 0.03, f.hat_color, segments=12)
        b.cylinder((0, 0, top), r * 0.85, r * 1.8, f.hat_color, segments=12)
    elif f.hat == "bun":
        b.sphere((0, -r * 0.7, head_z + r * 0.5), r * 0.5, f.hat_color, rings=4, segments=8)
        b.sphere((0, -r * 0.1, head_z + r * 0.2), r * 1.02, f.hat_color, rings=3, segments=10, hemisphere=True)
    elif f.hat == "helmet":
        b.sphere((0, 0, head_z + r * 0.1), r * 1.15, f.hat_color, rings=4, segments=12, hemisphere=True)
        b.cylinder((0, 0, head_z + r * 0.1), r * 1.3, 0.03, f.hat_color, segments=12)
    elif f.hat == "wide":
        b.cylinder((0, 0, top - 0.02), r * 2.4, 0.03, f.hat_color, segments=14)
        b.cylinder((0, 0, top), r * 0.9, r * 0.8, f.hat_color, segments=12, top_radius=r * 0.6)


def _accessory(b: MeshBuilder, f: Figure, body_base: float, torso_h: float, s: float, w: float) -> None:
    c = f.accessory_color
    if f.accessory == "backpack":
        b.box((0, -0.2 * w, body_base + torso_h * 0.2), (0.32 * w, 0.18, torso_h * 0.7), 0, c)
    elif f.accessory == "scarf":
        b.cylinder((0, 0, body_base + torso_h * 0.85), 0.2 * w, 0.1 * s, c, segments=10)
    elif f.accessory == "apron":
        b.box((0, 0.15 * w, body_base - 0.3 * s), (0.3 * w, 0.03, torso_h * 0.9), 0, c)
    elif f.accessory == "cane":
        b.cylinder((0.38 * w, 0.12, 0), 0.025, 0.9 * s, c, segments=6)
