"""Ctrl+C and SIGTERM go to the world's main thread only.

The main thread waits in accept() or poll(); a process-directed signal may be given to any thread that does not
block it, and one taken by a Panda3D or library thread sets Python's flag but leaves the main thread asleep in
accept() for good (a world that ignored Ctrl+C, seen under load). So the world blocks both signals before it
imports anything that starts threads (every thread inherits the mask), and the main thread alone unblocks them
once it is ready to serve. Once it stops, it blocks them again: a second Ctrl+C must not cut its release short.
Blocking is not enough on its own: a signal that lands just before the accept system call is missed by it too,
so the world waits for clients a bounded time (core/game/ipc.py ClientListener) and runs the handler between waits.
SIGTERM (`kill`, `timeout`, a service manager) stops the world as Ctrl+C does: Python's default for it ends
the process on the spot, which left a world started by hand holding its rings in /dev/shm until reboot.
"""

from __future__ import annotations

import signal

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


def block_in_new_threads() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def take_in_this_thread() -> None:
    """Stop signals reach this thread from now on, SIGTERM as a KeyboardInterrupt like Ctrl+C's."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def defer_in_this_thread() -> None:
    """While the world releases what it holds: a further stop signal waits, and threads started now inherit it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
