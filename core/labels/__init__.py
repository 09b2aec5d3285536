"""Human deadlock and failure labels for episode files: model and editing (model.py), crash-safe storage in
the episode's /labels group (store.py), agreement (agreement.py) and export (export.py). No Qt here: the
studio subscribes to `LabelEditor.on_change` and saves immutable snapshots from a worker thread
(studio/replay/label_session.py)."""
