"""Backends: which game a run drives (the built-in world, Minetest, Ryujinx, ...), described by data."""
