"""Agents: everything that decides actions. They see Observations only (pixels, instruction, history).

Isolation is structural: an import-linter contract forbids this package from importing
core.evaluation, core.memory or core.world, so no code path here can reach ground truth.
"""
