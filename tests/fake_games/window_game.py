"""A stand-in for a windowed game, for ExternalGame's tests: a real X11 window, no game engine.

    python tests/fake_games/window_game.py --title "Fake Game" --log events.txt [--child] [--guest-ram]

* Draws a picture that changes with the keys held (so tests see frames move with input) and a frame
  counter stripe (so frames keep changing).
* Appends every key, button and pointer event it receives to --log, flushed at once.
* --child: starts a child process of its own (as emulators start helpers), to test that closing ends it.
* --say TEXT: prints TEXT on its output at start (a game's log line, e.g. a failure); --window-after S shows
  its window only after S seconds; --exit-after S exits (status 3) after S seconds: start-ups that go wrong.
* --guest-ram: imitates Ryujinx's memory layout: an unlinked /dev/shm/Ryujinx-* file mapped three times
  (the block, a base view and a mirror), holding a state block whose x, y follow the arrow keys.
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib

from Xlib import X, display

GUEST_RAM = 64 << 20
BLOCK_AT = 0x2345680  # inside the guest RAM file
MAGIC = b"FAKEZA\x5a\xa5"


def guest_ram() -> tuple[int, list[mmap.mmap]]:
    fd, path = tempfile.mkstemp(prefix="Ryujinx-", dir="/dev/shm")
    os.unlink(path)  # the emulator keeps only the descriptor, as Ryujinx does
    os.ftruncate(fd, GUEST_RAM)
    views = [mmap.mmap(fd, GUEST_RAM) for _ in range(3)]
    return fd, views


def write_block(view: mmap.mmap, x: float, y: float, tick: int) -> None:
    body = MAGIC + struct.pack("<Qff", tick, x, y)
    view[BLOCK_AT:BLOCK_AT + len(body) + 4] = body + struct.pack("<I", zlib.crc32(body))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--title", default="PokeGym Fake Game")
    parser.add_argument("--log")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=180)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--guest-ram", action="store_true")
    parser.add_argument("--version", action="store_true")
    parser.add_argument("--say")
    parser.add_argument("--window-after", type=float, default=0.0)
    parser.add_argument("--exit-after", type=float)
    args = parser.parse_args()
    if args.version:
        print(os.environ.get("FAKE_GAME_VERSION", "FakeGame 1.0"))
        return 0
    if not args.log:
        parser.error("--log is required")
    if args.say:
        print(args.say, flush=True)
    started = time.monotonic()
    while time.monotonic() - started < args.window_after:  # a game still loading: no window yet
        if args.exit_after is not None and time.monotonic() - started >= args.exit_after:
            return 3
        time.sleep(0.02)
    log = open(args.log, "a", buffering=1)  # noqa: SIM115 - open for the process's life
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"]) if args.child else None
    if helper is not None:
        log.write(f"child {helper.pid}\n")
    _fd, views = guest_ram() if args.guest_ram else (-1, [])  # the descriptor stays open: it is the guest RAM
    d = display.Display()
    screen = d.screen()
    window = screen.root.create_window(0, 0, args.width, args.height, 0, screen.root_depth,
                                       event_mask=X.KeyPressMask | X.KeyReleaseMask | X.ButtonPressMask |
                                       X.ButtonReleaseMask | X.PointerMotionMask | X.FocusChangeMask)
    window.set_wm_name(args.title)
    window.change_property(d.intern_atom("_NET_WM_PID"), d.intern_atom("CARDINAL"), 32, [os.getpid()])
    window.map()
    gc = window.create_gc()
    colormap = screen.default_colormap
    held: set[int] = set()
    x = y = 0.0
    frame = 0
    log.write(f"ready {os.getpid()}\n")
    while True:
        while d.pending_events():
            event = d.next_event()
            if event.type in (X.KeyPress, X.KeyRelease):
                down = event.type == X.KeyPress
                (held.add if down else held.discard)(event.detail)
                log.write(f"key {event.detail} {'down' if down else 'up'}\n")
            elif event.type in (X.ButtonPress, X.ButtonRelease):
                log.write(f"button {event.detail} {'down' if event.type == X.ButtonPress else 'up'}\n")
            elif event.type == X.MotionNotify:
                log.write(f"motion {event.event_x} {event.event_y}\n")
            elif event.type == X.FocusIn:
                log.write("focus in\n")
        frame += 1
        arrows = {d.keysym_to_keycode(k): v for k, v in ((0xFF51, (-1, 0)), (0xFF53, (1, 0)), (0xFF52, (0, 1)),
                                                          (0xFF54, (0, -1)))}
        for code in held:
            dx, dy = arrows.get(code, (0, 0))
            x, y = x + dx * 0.1, y + dy * 0.1
        shade = (len(held) * 60) % 256
        gc.change(foreground=colormap.alloc_color(shade * 256, 20000, 40000).pixel)
        window.fill_rectangle(gc, 0, 0, args.width, args.height)
        gc.change(foreground=screen.white_pixel)
        window.fill_rectangle(gc, (frame * 7) % args.width, 0, 8, 12)  # moves every frame
        d.flush()
        if args.exit_after is not None and time.monotonic() - started >= args.exit_after:
            return 3
        for view in views[:1]:  # writing one view is enough: the others map the same pages
            write_block(view, x, y, frame)
        time.sleep(1 / 60)


if __name__ == "__main__":
    sys.exit(main())
