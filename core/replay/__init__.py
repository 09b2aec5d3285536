"""Replaying recorded episodes: Qt-free facts for the studio's replay view."""
