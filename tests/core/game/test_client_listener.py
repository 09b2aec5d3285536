"""The games' authenticated listener (core/game/ipc.py ClientListener): keyed clients only, bounded waits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from core.game import ipc

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def test_a_client_with_the_key_is_served_and_one_without_it_is_turned_away(tmp_path: Path) -> None:
    endpoint = ipc.new_endpoint(tmp_path)
    listener = ipc.listen(endpoint)
    try:
        impostor = ipc.Endpoint(endpoint.address, endpoint.family, b"not the key" * 3)
        # connect() runs its handshake in a thread of its own; the listener answers it from here
        outcome: dict[str, object] = {}

        def knock(which: ipc.Endpoint) -> None:
            try:
                conn = ipc.connect(which)
                ipc.send_message(conn, {"op": "hello"})
                outcome["conn"] = conn
            except ipc.AuthenticationError as exc:
                outcome["error"] = exc

        knocking = threading.Thread(target=knock, args=(impostor,))
        knocking.start()
        with pytest.raises(ipc.AuthenticationError):
            listener.accept_within(10.0)
        knocking.join()
        assert isinstance(outcome.get("error"), ipc.AuthenticationError)

        knocking = threading.Thread(target=knock, args=(endpoint,))
        knocking.start()
        served = listener.accept_within(10.0)
        knocking.join()
        assert served is not None
        header, _ = ipc.receive_message(served)
        assert header["op"] == "hello"
        served.close()
    finally:
        listener.close()
    assert not Path(endpoint.address).exists()  # nobody can knock on a closed listener


def test_a_wait_for_clients_ends_empty_handed_at_its_timeout(tmp_path: Path) -> None:
    listener = ipc.listen(ipc.new_endpoint(tmp_path))
    try:
        assert listener.accept_within(0.05) is None
    finally:
        listener.close()
    with pytest.raises(OSError, match="closed"):
        listener.accept_within(0.05)


def test_ctrl_c_taken_by_another_thread_still_ends_a_wait_for_clients(tmp_path: Path) -> None:
    """The kernel may give a process's SIGINT to any thread that does not block it, and one that lands just
    before the accept system call is not seen by it either: only the Python handler is marked pending, and a
    blocking accept() never returns to run it (a world sat in accept() after Ctrl+C in CI). Here another
    thread takes the signal on purpose; the waiting loop must still stop."""
    script = textwrap.dedent(f"""
        import signal, sys, threading
        from pathlib import Path
        from core.game import ipc
        listener = ipc.listen(ipc.new_endpoint(Path({str(tmp_path)!r})))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(0.3, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT)).start()
        try:
            while True:
                listener.accept_within(0.2)
        except KeyboardInterrupt:
            print("stopped")
        finally:
            listener.close()
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "stopped", done.stderr
