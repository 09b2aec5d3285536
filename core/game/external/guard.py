"""The input guard: a small process that outlives us, to release held keys if we are killed.

The X server does not release XTEST keys when the client that pressed them disconnects (checked:
a key pressed by a process killed with SIGKILL stays down). So ExternalGame starts this guard with a
pipe on its stdin and tells it, line by line, which keycodes and mouse buttons the game's mapping may
hold and which process groups we started. A clean close sends `bye`. End of file without `bye`
means we died (even by SIGKILL, the kernel closes the pipe): the guard releases those keys and
buttons on the display and ends the process groups we started (the game, our Xvfb), then exits.

    python -m core.game.external.guard --display :N
    stdin:  keys 25 38 40 | buttons 1 3 | group PGID | ungroup PGID | bye
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time


def _release(display_name: str, keys: set[int], buttons: set[int]) -> None:
    if not display_name or not (keys or buttons):
        return
    try:
        from Xlib import X, display
        from Xlib.ext import xtest

        connection = display.Display(display_name)
    except Exception as exc:  # noqa: BLE001 - no X server left: nothing can be held there
        print(f"guard: cannot reach {display_name} to release keys: {exc}", file=sys.stderr)
        return
    for code in sorted(keys):
        xtest.fake_input(connection, X.KeyRelease, code)
    for number in sorted(buttons):
        xtest.fake_input(connection, X.ButtonRelease, number)
    connection.sync()
    connection.close()


def _end_groups(groups: list[int], grace_s: float) -> None:
    from core.game.external.processes import group_members

    live = [g for g in groups if group_members(g)]
    for pgid in live:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(group_members(g) for g in live):
        time.sleep(0.05)
    for pgid in live:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.game.external.guard", description=__doc__)
    parser.add_argument("--display", default="")
    parser.add_argument("--grace", type=float, default=5.0)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl+C is for our owner, who then closes us
    keys: set[int] = set()
    buttons: set[int] = set()
    groups: list[int] = []
    print("READY", flush=True)
    for line in sys.stdin:
        word, *numbers = line.split()
        values = [int(n) for n in numbers if n.lstrip("-").isdigit()]
        if word == "bye":
            return 0
        if word == "keys":
            keys = set(values)
        elif word == "buttons":
            buttons = set(values)
        elif word == "group":
            groups += [v for v in values if v > 1 and v not in groups]
        elif word == "ungroup":
            groups = [g for g in groups if g not in values]
    # End of file without `bye`: our owner is gone. Keys first: the display may go with the groups.
    _release(args.display, keys, buttons)
    _end_groups(groups, args.grace)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
