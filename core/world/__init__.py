"""The built-in world: a Panda3D town that runs as its own process, like an emulator.

Only the world process imports this package (an import-linter contract checks it).
"""
