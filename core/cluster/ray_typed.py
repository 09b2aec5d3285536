"""Typed views of the parts of Ray that the cluster code calls.

Ray annotates only part of its API: an actor handle's methods (`handle.method.remote(...)`) are resolved at
run time, and a few functions (`ray.nodes`, `ray.wait`, `options`) have unannotated parameters or results.
Each function here is a plain call of its Ray counterpart with the types Ray documents; the actors' handles
are described by protocols of ActorMethod (core/cluster/ray_executor.py, core/cluster/ray_limiter.py).
"""

# This module is where Ray's partly unannotated API gets its types (see above), so its unknowns stop here:
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, cast

import ray

if TYPE_CHECKING:
    from ray.actor import ActorHandle

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")
_F = TypeVar("_F")
_F_co = TypeVar("_F_co", covariant=True)


class ActorMethod(Protocol[_P, _R]):
    """One method of an actor, seen through its handle: .remote(...) queues the call, and the ObjectRef it
    returns resolves (ray.get) to the method's result."""

    def remote(self, *args: _P.args, **kwargs: _P.kwargs) -> ray.ObjectRef[_R]: ...


def node_ip_address() -> str:
    return ray.util.get_node_ip_address()


def nodes() -> list[dict[str, Any]]:
    """ray.nodes(): one dict per node of the cluster ("NodeID", "Alive", "Resources", ...)."""
    return ray.nodes()


def wait(refs: list[ray.ObjectRef[_T]], num_returns: int, timeout: float | None
         ) -> tuple[list[ray.ObjectRef[_T]], list[ray.ObjectRef[_T]]]:
    """ray.wait(): (the ready refs, the others), among those given."""
    return ray.wait(refs, num_returns=num_returns, timeout=timeout)


class _Configurable(Protocol[_F_co]):
    def options(self, **options: Any) -> _F_co: ...


def with_options(remote: _Configurable[_F], **options: Any) -> _F:
    """remote.options(**options): the same remote function or actor class with other task or actor options."""
    return remote.options(**options)


def cancel(ref: ray.ObjectRef[Any], force: bool = False) -> None:
    ray.cancel(ref, force=force)


def kill(actor: object) -> None:
    """ray.kill() of an actor handle (typed here by its protocol, not as Ray's ActorHandle)."""
    ray.kill(cast("ActorHandle[Any]", actor))
