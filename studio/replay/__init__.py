"""The Replay view: recorded episodes, frame-exact, with deadlock labelling."""
