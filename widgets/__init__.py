"""Reusable Qt widgets that know nothing of the app (frame view, timeline, trajectory plot...)."""
