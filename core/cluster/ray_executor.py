"""Episodes as Ray tasks: one episode, one task, playing the same episode function as the local pool
(core/session/episode_job.py) into a private folder on its node, then streaming the files to the
coordinator on the driver's node.

Failures: a worker (or node) that dies mid-episode is Ray's to retry (`max_retries`), and the retry
replaces the partial upload; a game that dies inside an episode is the project's own infrastructure error
(a row with the cause, retried by --retries or a resume); an episode past --episode-timeout is stopped by
its own watchdog, and a worker that does not come back from that within BACKSTOP_GRACE_S is killed here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Protocol, cast

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from core.agents.models.rate_limit import RateLimits
from core.cluster.connect import RayCluster, connect, disconnect, kill_local_ray
from core.cluster.coordinator import CHUNK_BYTES, RunCoordinator
from core.cluster.fingerprint import Fingerprint, differences, fingerprint, mismatch_message
from core.cluster.ray_limiter import LimiterActor, LimiterHandle, RayLimiter
from core.cluster.ray_typed import ActorMethod, cancel, kill, node_ip_address, nodes, wait, with_options
from core.cluster.resources import EpisodeResources
from core.game import child
from core.session import run_folder, startup_gate
from core.session.batch_control import INTERRUPTED, BatchControl, Stoppable
from core.session.batch_driver import Finished
from core.session.episode_job import RESULT, SKIPPED, EpisodeJob, EpisodeOutcome, play_episode
from core.session.episodes import BatchError

# How often a running episode asks whether the run is stopping. 64 episodes asking every 0.5 s made 128 actor
# calls a second; every 2 s, `bench run --ray` at 64 on 2 cores used 115 ms of CPU a step instead of 140 (start-ups
# included). Ctrl+C still stops an episode within 2 s and its step.
STOP_POLL_S = 2.0
RUNNING_POLL_S = 1.0      # how often the driver reads the running table
BACKSTOP_GRACE_S = 60.0   # past --episode-timeout plus this, the worker itself is killed
UPLOAD_WINDOW = 2         # chunks in flight per upload: memory stays bounded at a few chunks
DEFAULT_MAX_RETRIES = 3   # Ray's retries of an episode whose worker or node died
FOLDER_PREFIX = "pokegym-episode-"  # then the worker's pid: a folder whose worker is gone can be removed


class NodeMismatch(BatchError):
    """A node would run different code or assets than the driver."""


class CoordinatorHandle(Protocol):
    """The run's RunCoordinator actor (core/cluster/coordinator.py) as Ray hands it out: each method is called
    with .remote()."""

    begin: ActorMethod[[str, str, str, int], bool]
    end: ActorMethod[[str, str], None]
    stop: ActorMethod[[], None]
    stopping: ActorMethod[[], bool]
    running: ActorMethod[[], dict[str, dict[str, Any]]]
    open_file: ActorMethod[[str], str]
    write: ActorMethod[[str, int, bytes], int]
    commit: ActorMethod[[str, int, str], None]
    discard: ActorMethod[[str], None]


def _node_name() -> str:
    return f"{socket.gethostname()} ({node_ip_address()})"


@ray.remote(num_cpus=0)
def _node_report(needed_env: tuple[str, ...]) -> tuple[str, Fingerprint, list[str]]:
    """Run on one node: its name, its fingerprint, and which of the needed environment variables it lacks."""
    return _node_name(), fingerprint(), [name for name in needed_env if not os.environ.get(name)]


class _RemoteControl:
    """The run's stop switch seen from a worker: polls the coordinator while the episode plays."""

    def __init__(self, coordinator: CoordinatorHandle) -> None:
        self.coordinator = coordinator
        self._stopping = False
        self._done = threading.Event()

    @property
    def stopping(self) -> bool:
        return self._stopping

    def start(self, runner: Stoppable) -> bool:
        def watch() -> None:
            while not self._done.wait(STOP_POLL_S):
                if ray.get(self.coordinator.stopping.remote()):
                    self._stopping = True
                    runner.stop(INTERRUPTED)
                    return

        threading.Thread(target=watch, name="episode-stop-watch", daemon=True).start()
        return True

    def finished(self, runner: Stoppable) -> None:
        self._done.set()


def _upload(coordinator: CoordinatorHandle, source: Path, relative: str) -> None:
    """Stream one file to the driver's run folder, a window of chunks at a time, checked and renamed there."""
    token = ray.get(coordinator.open_file.remote(relative))
    digest, size = hashlib.sha256(), 0
    pending: list[ray.ObjectRef[int]] = []
    try:
        with source.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                pending.append(coordinator.write.remote(token, size, chunk))
                size += len(chunk)
                if len(pending) >= UPLOAD_WINDOW:
                    ray.get(pending.pop(0))
        ray.get(pending)
        ray.get(coordinator.commit.remote(token, size, digest.hexdigest()))
    except BaseException:
        coordinator.discard.remote(token)
        raise


def _remove_orphaned_folders() -> None:
    """Episode folders of workers that were killed (their `finally` never ran): a recording can be large."""
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        owner = folder.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not child.pid_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


@ray.remote
def _episode_task(job: EpisodeJob, coordinator: CoordinatorHandle, limiter: RayLimiter | None,
                  expected: str) -> EpisodeOutcome:
    mine = fingerprint()
    if mine.digest != expected:
        raise NodeMismatch(f"node {_node_name()} changed since the run started (its project files or libraries "
                           "no longer match the driver's); install the driver's commit there and run again")
    attempt = os.urandom(8).hex()
    if not ray.get(coordinator.begin.remote(job.key, attempt, _node_name(), os.getpid())):
        return EpisodeOutcome(SKIPPED)
    _remove_orphaned_folders()
    root = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
    try:
        # Start-ups take turns among every worker on this node, not only within this worker process.
        # (through the module: Ray pickles what a task's code names, and the gate holds a lock)
        outcome = play_episode(job, root, _RemoteControl(coordinator), limiter, startup_gate.NODE_STARTUP_GATE)
        if outcome.kind != SKIPPED:
            for relative in outcome.files:
                _upload(coordinator, root / relative, relative)
        return outcome
    finally:
        shutil.rmtree(root, ignore_errors=True)
        coordinator.end.remote(job.key, attempt)


class RayExecutor:
    """Runs a batch's episodes on Ray. `connect()` first (before the run folder is made), then the driver
    opens it; `max_in_flight` caps episodes handed to Ray at once (None: all, Ray queues them)."""

    def __init__(self, address: str | None, resources: EpisodeResources, max_in_flight: int | None = None,
                 needed_env: tuple[str, ...] = (), max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.address, self.resources, self.max_in_flight = address, resources, max_in_flight
        self.needed_env, self.max_retries = needed_env, max_retries
        self.cluster: RayCluster | None = None
        self.expected: Fingerprint | None = None
        self._refs: dict[ray.ObjectRef[EpisodeOutcome], EpisodeJob] = {}
        self._running: dict[str, dict[str, Any]] = {}
        self._running_read = 0.0
        self._timed_out: set[str] = set()
        self._coordinator: CoordinatorHandle | None = None
        self._limiter: RayLimiter | None = None
        self._control = BatchControl()
        self._timeout_s: float | None = None
        self._stopped = False

    # -- before the run -------------------------------------------------------------------------
    def connect(self) -> RayCluster:
        """Join (or start) Ray and check every node; BatchError with a one-line reason when it cannot run."""
        self.cluster = connect(self.address)
        try:
            self.expected = fingerprint()
            self._check_nodes()
        except BaseException:
            disconnect()
            raise
        return self.cluster

    def _check_nodes(self) -> None:
        alive = [n for n in nodes() if n.get("Alive")]
        if not any(n["Resources"].get("CPU", 0) >= self.resources.cpus and
                   all(n["Resources"].get(k, 0) >= v for k, v in self.resources.custom.items()) for n in alive):
            raise BatchError(f"no node of the cluster can run an episode ({self.resources.describe()}); lower "
                             "--cpus-per-episode, or start nodes with those resources (docs/cluster.md)")
        reports = ray.get([with_options(_node_report, scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(self.needed_env) for n in alive])
        assert self.expected is not None
        for name, theirs, missing in reports:
            found = differences(self.expected, theirs)
            if found:
                raise NodeMismatch(mismatch_message(name, found))
            if missing:
                raise BatchError(f"node {name} lacks {' and '.join(missing)} in its environment: start Ray there "
                                 "with the variable set (keys never travel through Ray; docs/cluster.md)")

    # -- the executor protocol ------------------------------------------------------------------
    def open(self, out: Path, control: BatchControl, limits: RateLimits | None) -> None:
        if self.cluster is None:
            self.connect()
        assert self.cluster is not None
        self._control = control
        if self.cluster.started_here:
            control.on_abort(kill_local_ray)  # a second Ctrl+C exits at once: take the private Ray along
        here = NodeAffinitySchedulingStrategy(self.cluster.driver_node, soft=False)
        self._coordinator = cast(CoordinatorHandle, ray.remote(RunCoordinator).options(
            num_cpus=0, max_concurrency=32, scheduling_strategy=here).remote(str(out.resolve())))
        if limits is not None and limits.active:
            actor = LimiterActor.options(scheduling_strategy=here).remote(limits)
            self._limiter = RayLimiter(cast(LimiterHandle, actor))
        self._task = with_options(_episode_task, num_cpus=self.resources.cpus, resources=dict(self.resources.custom),
                                  max_retries=self.max_retries, retry_exceptions=False)

    def submit(self, job: EpisodeJob) -> None:
        assert self.expected is not None and self._coordinator is not None  # open() came first
        self._timeout_s = job.timeout_s
        self._refs[self._task.remote(job, self._coordinator, self._limiter, self.expected.digest)] = job

    def collect(self, timeout: float) -> list[Finished]:
        self._read_running()
        if not self._refs:
            return []
        ready, _ = wait(list(self._refs), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        finished = [(self._refs[ref], self._outcome(ref, self._refs.pop(ref))) for ref in ready]
        for job, _ in finished:
            self._running.pop(job.key, None)  # gone from the table at the next read; not counted meanwhile
        return finished

    def _outcome(self, ref: ray.ObjectRef[EpisodeOutcome], job: EpisodeJob) -> EpisodeOutcome | BaseException:
        try:
            return ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            if job.key in self._timed_out:
                return self._error(job, f"the episode ran past its time limit of {job.timeout_s:g} s "
                                        "(--episode-timeout) and its Ray worker did not stop; the worker was killed")
            return EpisodeOutcome(SKIPPED)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            return cause if isinstance(cause, BaseException) else exc
        except ray.exceptions.RayError as exc:  # the worker or node died more often than Ray retries
            if self._stopped:
                return EpisodeOutcome(SKIPPED)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return self._error(job, f"its Ray worker died {self.max_retries + 1} times ({type(exc).__name__}: "
                                    f"{first})")

    @staticmethod
    def _error(job: EpisodeJob, message: str) -> EpisodeOutcome:
        task = job.spec.task
        return EpisodeOutcome(RESULT, {
            "task_id": task.id, "granularity": job.spec.granularity, "agent": job.spec.agent_spec, "success": False,
            "end_reason": run_folder.ERROR, "error": message, "category": task.category, "quest": task.quest,
            "key": job.key, "trial": job.spec.trial, "agent_spec": job.spec.agent_spec, "episode": None})

    def _read_running(self) -> None:
        now = time.time()
        if now - self._running_read < RUNNING_POLL_S or self._coordinator is None:
            return
        self._running_read = now
        self._running = ray.get(self._coordinator.running.remote())
        if not self._timeout_s:
            return
        late = {key for key, entry in self._running.items()
                if now - entry["started"] > self._timeout_s + BACKSTOP_GRACE_S and key not in self._timed_out}
        for ref, job in list(self._refs.items()):
            if job.key in late:
                self._timed_out.add(job.key)
                cancel(ref, force=True)

    @property
    def outstanding(self) -> int:
        return len(self._refs)

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def capacity(self) -> int | None:
        return self.max_in_flight

    def stop(self) -> None:
        """Queued tasks are cancelled; running episodes see the coordinator's switch and stop after their step."""
        if self._stopped or self._coordinator is None:
            return
        self._stopped = True
        ray.get(self._coordinator.stop.remote())
        begun = set(ray.get(self._coordinator.running.remote()))
        for ref, job in self._refs.items():
            if job.key not in begun:
                cancel(ref)  # not begun: it never starts (one that begins meanwhile sees the switch)

    def close(self) -> None:
        """Cancel what is left (after a failure), end the run's actors, and stop a Ray started here."""
        if not ray.is_initialized():
            return
        for ref in self._refs:
            cancel(ref, force=True)
        self._refs.clear()
        for actor in (self._coordinator, self._limiter.actor if self._limiter else None):
            if actor is not None:
                kill(actor)
        self._coordinator = self._limiter = None
        if self.cluster is not None and self.cluster.started_here:
            disconnect()
