"""External games: window capture, XTEST/uinput/vgamepad input and the process lifecycle (docs/backend-format.md)."""
