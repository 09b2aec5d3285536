"""Sharing what a run found outside the studio: video clips with overlays, training datasets, and a
self-contained HTML report (docs/export.md)."""


class ExportError(Exception):
    """An export that cannot be done as asked; the message says why and what to do instead."""


class ExportCancelled(Exception):
    """The user cancelled an export; nothing was left behind."""
