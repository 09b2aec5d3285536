"""The memory finder: discover where an unknown game keeps its position and flags, and build a profile.

Read-only throughout: it drives the game with our own pad and reads its memory, nothing more.
"""
