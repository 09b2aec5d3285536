"""Joining a Ray cluster, or starting a private one on this machine, for `python main.py run --ray [ADDRESS]`.

A local Ray (no address) binds only to the loopback interface and keeps Ray's token authentication on, so
nothing else on the network can submit work to it; it is stopped when the run ends. Joining (`auto`, or
HOST:PORT of a head started with `ray start --head`) uses that cluster as it is; see docs/cluster.md.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
import socket
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from core.session.episodes import BatchError

LOCAL = "local"
# Ray reads this at import: "0" makes a single-machine Ray use 127.0.0.1 (otherwise it listens on the LAN
# address). tests/core/cluster/test_ray_runs.py checks that a local start still ends up on loopback.
_LOOPBACK_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@dataclass(frozen=True)
class RayCluster:
    address: str         # the GCS address (HOST:PORT)
    started_here: bool   # a private local Ray, stopped with the run
    driver_node: str     # the node id the driver is attached to: episode files are written there
    cpus: float


def import_ray(local: bool = False) -> ModuleType:
    if local:
        for name, value in _LOOPBACK_ONLY.items():
            os.environ.setdefault(name, value)
    try:
        import ray
    except ImportError:
        raise BatchError("--ray needs Ray, which is an optional extra: pip install -e '.[ray]'") from None
    return ray


REACH_TIMEOUT_S = 10.0


def _on_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_reachable(address: str) -> None:
    """Ray retries an unreachable head for minutes; find out in seconds, and say what to check."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise BatchError(f"--ray {address!r}: give auto, or the head's HOST:PORT (the port `ray start --head` "
                         "printed, 6379 by default)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S):
            pass
    except OSError as exc:
        raise BatchError(f"cannot reach the Ray head at {address} ({exc.strerror or exc}); is `ray start --head "
                         "--port PORT` running there, and does the firewall let this machine in?") from None


def connect(address: str | None, num_cpus: int | None = None) -> RayCluster:
    """Attach this process to Ray: a new private local instance when `address` is None or "local"."""
    local = address in (None, LOCAL)
    already = _attached()
    if already is not None:
        return already  # this process is attached already (a bench running several executors on one Ray)
    if address is not None and not local and address != "auto":
        _check_reachable(address)
    # A head on loopback was started loopback-only; the driver must not swap 127.0.0.1 for its LAN address.
    ray = import_ray(local or _on_loopback(address.rpartition(":")[0].strip("[]")))  # not local: address is set
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    try:
        if local:
            context = ray.init(num_cpus=num_cpus, include_dashboard=False, **options)
        else:
            context = ray.init(address=address, **options)
    except Exception as exc:  # noqa: BLE001 - Ray raises several kinds; each becomes the same one-line error
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = "start a local Ray" if local else f"join the Ray cluster at {address}"
        hint = ("" if local else "; is `ray start --head` running there, and is this machine a node of it (run the "
                "driver on the head node, see docs/cluster.md)?")
        raise BatchError(f"cannot {where}: {first_line}{hint}") from None
    info = context.address_info
    return RayCluster(address=str(info.get("gcs_address", address)), started_here=local,
                      driver_node=ray.get_runtime_context().get_node_id(),
                      cpus=float(ray.cluster_resources().get("CPU", 0.0)))


def _attached() -> RayCluster | None:
    import sys

    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    context = ray.get_runtime_context()
    return RayCluster(address=context.gcs_address, started_here=False, driver_node=context.get_node_id(),
                      cpus=float(ray.cluster_resources().get("CPU", 0.0)))


def kill_local_ray() -> None:
    """Abort: SIGKILL every process under this one (a private Ray: its GCS, raylet, agents and workers, whose
    worlds then exit on their own). Safe in a signal handler: /proc reads and kill calls only."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as handle:
                    parents[int(entry.name)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    doomed: set[int] = set()
    frontier = [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in doomed:
                doomed.add(pid)
                frontier.append(pid)
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def disconnect() -> None:
    """Detach; a Ray this process started stops with it (its workers, and so their worlds, exit too)."""
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()
