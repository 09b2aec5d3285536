"""From a found position to a verified profile: observe it in several game processes, build the
signature, and check it on fresh processes started through the game's launcher.

    builder = SignatureBuilder(launch, BuildOptions(name="minetest", game="Minetest 5.6.1"))
    result = builder.build()          # finds the position itself in each process
    profile_writer.write(path, result.profile_data, result.draft)

In the second and later processes the value is first looked for with a loose pattern made from
the processes so far (fast, and proof that the surroundings repeat); only if that is not unique
does the motion finder run again, and its candidate whose surroundings look most like the first
process's wins. A signature that fails verification adds that process to the observations and
is rebuilt, up to `max_processes`.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np

from core.evaluation.profile import Profile
from core.finder.copies import STRONG_SWEEPS, WEAK_SWEEPS, Widened, choose_widening
from core.finder.fallback import to_pointers
from core.finder.motion import Closable, FinderCancelled, FinderError, GameLauncher, MotionPlan, Progress
from core.finder.pointer_search import PointerReport
from core.finder.position import FinderOptions, PositionFinder
from core.finder.profile_writer import FlagField, ProfileDraft, build, validate
from core.finder.ranking import RankedTriple, turn_sign
from core.finder.signature import (
    AFTER,
    BEFORE,
    MARGIN,
    VALUE_BYTES,
    Observation,
    Pick,
    candidate_windows,
    derive,
    observe,
    pattern_text,
)
from core.finder.verify import VerifyResult, verify_profile
from core.memory.pattern import parse_pattern
from core.memory.readers import MemoryReader, open_reader
from core.memory.scanner import RegionFilter, scan

# Copies of the same structure in two runs share most bytes around the value (83% on Minetest); another
# structure that also holds the position shares few (39% seen).
MIN_SIMILARITY = 0.6
# Candidates this close to the most similar one are copies of the same struct: a ring of snapshots or a pool
# of identical structs is exactly as like process 1's (1.0 each on the ring target). Different structs holding
# the position are not: on Minetest, 0.828, 0.807 and 0.75 like process 1's; a band of 0.05 took the 0.807
# one, ranked higher, and then no pattern could tell the two processes' copies apart from 11 others.
SAME_STRUCT = 0.01
# Two processes' copies at least this alike are one struct (a pool's slots: 100%); Minetest's structs holding
# the position were 77-85% alike between launches, and two of them could be different structs.
SAME_COPY = 0.95
LIKEST_KEPT = 5      # the candidates most like process 1's, kept in the result for each later process
# Candidates of a later process looked at for the struct process 1's value lives in. The finder's own top 20
# is too few where the position has many copies: on a loaded machine Minetest's 20 best were all other
# structs' copies (79% alike at best), the signature found none unique, and the pointer search failed.
LOCATE_CANDIDATES = 100
# Structs holding the position that the builder sets aside for another before it settles for a weak pattern (one
# not clear of every other place by signature.MARGIN bytes) or gives up on patterns. On Minetest the finder's best
# copy was at times the player's scene node: every pattern around it told it from the other scene nodes by a byte
# or two (their scale 1.0 floats and flags are the same), and in later launches 4 to 6 other nodes matched it
# exactly (952 nodes like it per process); set aside, another struct holding the position (with the player's name)
# gave a pattern of 45 literal bytes, clear of everything.
OTHER_STRUCTS = 2


class _NoOtherStruct(Exception):
    """No candidate of this process holds the position outside the structs set aside."""


class _Unmatched(Exception):
    """No candidate in this process sits in surroundings like the first process's."""

    def __init__(self, message: str, likest: list[dict[str, Any]], own_best: _Found) -> None:
        super().__init__(message)
        self.likest = likest
        self.own_best = own_best   # this process's best-ranked copy, as process 1's was chosen


@dataclass
class BuildOptions:
    name: str = "found_game"
    game: str = "unknown game"
    game_version: str | None = None
    processes: int = 2
    verify: int = 2     # one fresh process can pass by luck (a byte that differs in some runs only)
    # Minetest's builds took 4 processes more than once (patterns from fewer matched nowhere on the next fresh
    # process), and one CI run spent 4 without a pattern that verified: 6, which costs time only where needed.
    max_processes: int = 6
    scale: float = 1.0
    units: str | None = None
    flags: FlagField | None = None
    plan: MotionPlan = field(default_factory=MotionPlan)
    finder: FinderOptions = field(default_factory=FinderOptions)
    pointer_fallback: bool = True   # when no pattern can be unique, search pointer roots instead


@dataclass
class BuildResult:
    ok: bool
    message: str
    profile_data: dict[str, Any] | None = None
    draft: ProfileDraft | None = None
    pick: Pick | None = None
    processes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    verifications: list[VerifyResult] = field(default_factory=list[VerifyResult])  # of the signature returned
    rejected: list[VerifyResult] = field(default_factory=list[VerifyResult])  # earlier patterns' failed checks
    # processes whose found copy was not process 1's structure
    skipped: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    wildcards: dict[str, int] = field(default_factory=dict[str, int])
    pointers: PointerReport | None = None   # the pointer search's report, when the builder fell back to it
    built_from: list[int] = field(default_factory=list[int])   # the pids the pattern came from (all, or a group)
    # How the found copy turned from forward to strafing right (core/finder/ranking.py): what a later check of
    # the profile must see too (core/finder/verify.py)
    right_turn: float | None = None

    @property
    def profile(self) -> Profile | None:
        return validate(self.profile_data) if self.profile_data is not None else None

    def next_steps(self, game: str = "GAME", out: str | None = None) -> list[str]:
        """What to try next, whatever the outcome."""
        if self.pointers is not None:
            return self.pointers.next_steps(game, (out or "PROFILE.yaml") if self.ok else None)
        if self.ok:
            where = out or "PROFILE.yaml"
            return [f"check it on more restarts: python main.py memory verify --profile {where} --backend {game} "
                    "--restarts 3",
                    f"then over a long walk, which short moves cannot show: python main.py tasks validate TASK.yaml "
                    f"--profile {where}"]
        return [f"try pointer roots: python main.py memory pointers --backend {game} --out PROFILE.yaml",
                f"or build from more processes: python main.py memory signature --backend {game} --processes 3 "
                "--out PROFILE.yaml"]

    def to_json(self, game: str = "GAME", out: str | None = None) -> dict[str, object]:
        return {"ok": self.ok, "message": self.message,
                "pattern": self.pick.pattern.text if self.pick else None,
                "pattern_start": self.pick.start if self.pick else None,
                "processes": self.processes, "verifications": [v.to_json() for v in self.verifications],
                "rejected": [v.to_json() for v in self.rejected], "skipped": self.skipped,
                "built_from": self.built_from, "wildcards": self.wildcards,
                "right_turn": None if self.right_turn is None else round(self.right_turn, 3),
                "pointers": self.pointers.to_json(game, out) if self.pointers is not None else None,
                "next": self.next_steps(game, out)}


@dataclass
class _Found:
    address: int
    vertical: int
    speed: float
    values: tuple[float, float, float]
    how: str
    # The candidates most like process 1's surroundings (address, rank, similarity, score), for the result's
    # account of each process: what it could have chosen instead.
    likest: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    right_turn: float | None = None  # the candidate's (core/finder/ranking.py): verification must turn the same way


@dataclass
class _WeakPick:
    """A pattern settled for in a struct that was then set aside for another (OTHER_STRUCTS), with what its
    verification and its result need."""

    pick: Pick
    draft: ProfileDraft
    pids: list[int]
    wildcards: dict[str, int]
    first: _Found | None


class SignatureBuilder:
    def __init__(self, launcher: GameLauncher, options: BuildOptions | None = None,
                 progress: Progress | None = None, cancel: threading.Event | None = None) -> None:
        self.launcher = launcher
        self.options = options or BuildOptions()
        self.progress = progress
        self.cancel = cancel
        self._first: _Found | None = None
        # Process 1's surroundings in each struct set aside (OTHER_STRUCTS), and the first of those structs' copy
        self._unlike: list[Observation] = []
        self._set_aside_first: _Found | None = None
        self._weak: _WeakPick | None = None   # the best pattern settled for in a struct set aside
        self._alternatives: list[RankedTriple] = []   # process 1's other candidates (the finder's), best first

    def _report(self, what: str, fraction: float) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise FinderCancelled("cancelled by the user")
        if self.progress is not None:
            self.progress(what, fraction, 0)

    def build(self, game: Closable | None = None, address: int | None = None, vertical: int | None = None,
              speed: float | None = None, right_turn: float | None = None,
              alternatives: list[RankedTriple] | None = None) -> BuildResult:
        """Build from `game` (closed here when done with) and a known `address`, or launch and find.
        `alternatives`: the finder's other candidates in `game`, for when `address`'s struct is crowded."""
        self._alternatives = list(alternatives or [])
        options = self.options
        if options.processes < 2 or options.verify < 1:
            raise FinderError("a signature is built from at least 2 processes and verified on at least 1 more")
        observations: list[Observation] = []
        result = BuildResult(False, "")
        known = _Found(address, vertical or 2, speed or 0.0, (0.0, 0.0, 0.0), "given", right_turn=right_turn) \
            if address is not None else None
        try:
            while True:
                total = options.processes + options.verify
                if game is None:
                    self._report(f"starting game process {len(observations) + 1}", len(observations) / total)
                    game = self.launcher()
                try:
                    found, observation, aside_here = self._observe(game, observations, known)
                    result.skipped.extend(aside_here)
                except _NoOtherStruct as exc:
                    game.close()
                    game = None
                    aside = "; ".join(entry["because"] for entry in result.skipped if entry.get("set_aside"))
                    return self._settle(result, f"{aside}; {exc}" if aside else str(exc), observations)
                except _Unmatched as exc:
                    if len(observations) == 1 and len(result.skipped) < options.max_processes:
                        # Process 1's copy may be the odd one: on Minetest the finder once ranked a copy in a
                        # thread's heap first, and five processes in a row had nothing like it. With nothing built
                        # on it yet, process 1 is set aside and this process, from its own best copy, starts over.
                        dropped = observations.pop()
                        if dropped.image is not None:
                            dropped.image.delete()
                        first = result.processes.pop()
                        result.skipped.append({"pid": first["pid"], "likest": [], "address": first["address"],
                                               "set_aside": True, "because": "the next process had nothing like it",
                                               "summary": f"the first process's copy ({hex(first['address'])}) was "
                                                          "set aside: the next process had nothing like it",
                                               "reason": f"nothing in process {game.pid} was like its copy ({exc}); "
                                                         "started over from that process"})
                        self._first = None
                        known = exc.own_best
                        continue  # the same game, observed as process 1
                    # The motion finder found a different copy of the position in this process (another
                    # structure holding it): building from it would only make the pattern impossible.
                    result.skipped.append({"pid": game.pid, "reason": str(exc), "likest": exc.likest})
                    game.close()
                    game = None
                    if len(result.skipped) > options.max_processes:
                        return self._settle(result, f"in {len(result.skipped)} processes the position found did "
                                                    "not sit in surroundings like process 1's; the value may live "
                                                    "in a structure that differs between runs", observations)
                    continue
                known = None
                result.right_turn = self._first.right_turn if self._first is not None else None
                observations.append(observation)
                result.processes.append({"pid": observation.pid, "address": observation.address,
                                         "found_by": found.how, "values": list(found.values),
                                         **({"likest": found.likest} if found.likest else {})})
                game.close()
                game = None
                if len(observations) < options.processes:
                    continue
                self._report("building the signature", len(observations) / total)
                exclude = [] if options.flags is None else [(options.flags.relative, options.flags.relative + 8)]
                widened, used = choose_from_subsets(observations, exclude)
                pick = widened.pick
                result.wildcards = widened.model.reasons
                if pick is None:
                    # Where no window tells the copies apart in any group of the processes, or the processes
                    # are spent, no pattern can be unique.
                    # Two processes whose copies are not alike may hold different structs (choose_from_subsets):
                    # a third is looked at before giving up.
                    hopeless = widened.hopeless and (len(observations) >= 3 or _alike(*observations[:2]) >= SAME_COPY)
                    if hopeless or len(observations) >= options.max_processes:
                        why = (f"the value lives in {widened.copies // len(observations) + 1} copies of one "
                               "struct per process, and no window around it tells the game's own apart"
                               if hopeless else
                               f"no pattern around the value was unique in all {len(observations)} processes")
                        if self._may_set_aside(result):
                            self._set_aside(result, observations, why)
                            continue
                        return self._settle(result, why, observations)
                    continue
                kin = widened.copies // len(used)   # other places per process like the struct around the value
                if pick.margin < MARGIN and kin >= 1 and self._may_set_aside(result):
                    # Told apart from other objects of its kind by a byte or two that are theirs to change: another
                    # struct holding the position may give a pattern clear of everything. This one is kept in case.
                    why = (f"its struct has about {kin} others like it in each process, and its best pattern "
                           f"({pick.literals} literal bytes) was not clear of every other place by {MARGIN} bytes")
                    weak = _WeakPick(pick, self._draft(pick, used), [o.pid for o in used], widened.model.reasons,
                                     self._first)
                    if self._weak is None or (pick.margin, pick.literals) > (self._weak.pick.margin,
                                                                             self._weak.pick.literals):
                        self._weak = weak
                    self._set_aside(result, observations, why)
                    continue
                result.pick = pick
                result.built_from = [o.pid for o in used]
                draft = self._draft(pick, used)
                data = build(draft)
                profile = validate(data)
                failed = None
                result.verifications = []  # only the checks of the pattern that is returned count
                for index in range(options.verify):
                    self._report(f"verifying on fresh process {index + 1}", (len(observations) + index) / total)
                    game = self.launcher()
                    # The profile reports scaled units; the finder measured the stored ones.
                    assert self._first is not None  # the first _observe set it
                    expected = self._first.speed * abs(options.scale) if self._first.speed else None
                    check = verify_profile(game, profile, options.plan, expected_speed=expected,
                                           expected_right_turn=self._first.right_turn)
                    result.verifications.append(check)
                    # Found only thanks to the tolerance: a byte kept literal varies between launches. While
                    # processes may still be added, this one joins the build so the byte becomes a wildcard
                    # and the tolerance stays a margin, not a necessity.
                    near_miss = check.ok and check.mismatches > 0 and len(observations) < options.max_processes
                    if not check.ok or near_miss:
                        failed = check
                        result.rejected.append(check)
                        break
                    game.close()
                    game = None
                if failed is None:
                    last = result.verifications[-1].message if result.verifications else "not verified"
                    draft.provenance.append(f"Verified on {options.verify} fresh process(es): {last}.")
                    result.profile_data, result.draft = build(draft), draft
                    result.ok, result.message = True, _signature_message(pick, len(used), options.verify)
                    if len(used) < len(observations):
                        result.message += (f"; built from {len(used)} of the {len(observations)} processes (pids "
                                           f"{', '.join(str(o.pid) for o in used)}): no pattern was common to all, "
                                           "their copies of the value were in different structs")
                    aside = [entry for entry in result.skipped if entry.get("set_aside")]
                    for entry in aside:
                        result.message += f"; {entry['summary']}"
                    if len(result.skipped) > len(aside):
                        result.message += (f"; {len(result.skipped) - len(aside)} process(es) skipped: the position "
                                           "found there was another structure's copy")
                    if result.rejected:
                        result.message += (f" (an earlier pattern failed, or matched only with a byte differing, on "
                                           f"{len(result.rejected)} fresh process(es), which were added to the build)")
                    return result
                if len(observations) >= options.max_processes:
                    # Every pattern the processes allowed failed on the next fresh one: none is reliably unique.
                    if game is not None:
                        game.close()
                        game = None
                    return self._settle(result, f"the signature failed on a fresh process: {failed.message}",
                                        observations)
                # The failing process becomes one more observation: rebuild with it.
        finally:
            if game is not None:
                game.close()
            for observation in observations:
                if observation.image is not None:
                    observation.image.delete()

    def _may_set_aside(self, result: BuildResult) -> bool:
        return (self._first is not None and len(self._unlike) < OTHER_STRUCTS
                and len(result.skipped) < self.options.max_processes)

    def _set_aside(self, result: BuildResult, observations: list[Observation], why: str) -> None:
        """Start over from another struct holding the position: the next process is searched by the motion
        finder for its best candidate unlike every struct set aside."""
        assert self._first is not None
        reference = observations[0]
        self._unlike.append(reference)   # its windows stay, for telling the struct again in later processes
        self._set_aside_first = self._set_aside_first or self._first
        result.skipped.append({"pid": reference.pid, "address": reference.address, "likest": [], "set_aside": True,
                               "pids": [entry["pid"] for entry in result.processes],
                               "because": why,
                               "summary": f"the copy at {reference.address:#x} was set aside: {why}; built from "
                                          "another struct holding the position",
                               "reason": f"{why}: its kind of struct has others like it; started over from "
                                         "another struct holding the position"})
        for observation in observations:
            if observation.image is not None:
                observation.image.delete()
                observation.image = None
        observations.clear()
        result.processes.clear()
        self._first = None
        self._alternatives = []   # the next process's own, from its search
        self._report(f"{why}: looking for another struct holding the position", 0.0)

    def _other_struct(self, pid: int, reader: MemoryReader, candidates: list[RankedTriple]) -> _Found:
        """In a fresh process: its best candidate that is another kind of struct than those set aside."""
        before = self._set_aside_first
        assert before is not None
        found = _other_candidate(reader, candidates, before, self._unlike)
        if found is None:
            raise _NoOtherStruct(f"no other struct in process {pid} holds the position (of {len(candidates)} "
                                 "candidates, each was like a struct set aside, or at another height)")
        return found

    def _settle(self, result: BuildResult, why: str, observations: list[Observation]) -> BuildResult:
        """No pattern from the struct at hand: the weak pattern of a struct set aside if it verifies, else the
        pointer search."""
        weak, self._weak = self._weak, None
        self._first = self._first or self._set_aside_first
        if weak is None:
            return self._fall_back(result, why, observations)
        profile = validate(build(weak.draft))
        first = weak.first or self._first
        expected = first.speed * abs(self.options.scale) if first is not None and first.speed else None
        checks: list[VerifyResult] = []
        for index in range(self.options.verify):
            self._report(f"verifying the pattern settled for on fresh process {index + 1}", 0.9)
            game = self.launcher()
            try:
                checks.append(verify_profile(game, profile, self.options.plan, expected_speed=expected,
                                             expected_right_turn=first.right_turn if first else None))
            finally:
                game.close()
            if not checks[-1].ok:
                result.rejected.append(checks[-1])
                return self._fall_back(result, f"{why}; the pattern settled for before failed on a fresh process: "
                                               f"{checks[-1].message}", observations)
        weak.draft.provenance.append(f"Verified on {len(checks)} fresh process(es): {checks[-1].message}.")
        result.ok, result.pick, result.built_from = True, weak.pick, weak.pids
        result.wildcards, result.verifications = weak.wildcards, checks
        result.profile_data, result.draft = build(weak.draft), weak.draft
        result.right_turn = first.right_turn if first else None
        result.message = (_signature_message(weak.pick, len(weak.pids), len(checks))
                          + f"; kept because no other struct holding the position did better ({why})")
        return result

    def _observe(self, game: Closable, observations: list[Observation],
                 known: _Found | None) -> tuple[_Found, Observation, list[dict[str, Any]]]:
        """The value's copy in this process, observed; in process 1, another struct's copy in the same process where
        its own struct is crowded (with what was set aside)."""
        reader = open_reader(game.pid)
        try:
            found = known if known is not None else self._locate(game, reader, observations)
            if found.how == "given":  # what it holds now: the profile's validation ranges are sized on it
                triple = np.frombuffer(reader.read(found.address, VALUE_BYTES), np.float32)
                if len(triple) == 3 and np.isfinite(triple).all():
                    found.values = (float(triple[0]), float(triple[1]), float(triple[2]))
            if self._first is None:
                self._first = found
            self._report(f"observing process {len(observations) + 1}", 0.0)
            observation = observe(game, reader, found.address, self.options.plan,
                                  region_filter=self.options.finder.region_filter)
            aside: list[dict[str, Any]] = []
            if not observations and self._alternatives:
                found, observation, aside = self._uncrowded(game, reader, found, observation)
                self._first = found
            return found, observation, aside
        finally:
            reader.close()

    def _uncrowded(self, game: Closable, reader: MemoryReader, found: _Found,
                   observation: Observation) -> tuple[_Found, Observation, list[dict[str, Any]]]:
        """Process 1's copy, or, where its struct is crowded (_crowded), the next candidate of the same process that
        is another kind of struct: observed now, without a restart or another search. One process is enough to
        tell: more only make fewer bytes literal, so a pattern short of its margin in one is short in all."""
        aside: list[dict[str, Any]] = []
        while len(self._unlike) < OTHER_STRUCTS:
            why = self._crowded(observation)
            candidate = None if why is None else _other_candidate(reader, self._alternatives, found,
                                                                  [*self._unlike, observation])
            if why is None or candidate is None:
                break
            self._unlike.append(observation)
            self._set_aside_first = self._set_aside_first or found
            if observation.image is not None:
                observation.image.delete()
                observation.image = None
            aside.append({"pid": game.pid, "address": found.address, "likest": [], "set_aside": True,
                          "pids": [game.pid], "because": why,
                          "summary": f"the copy at {found.address:#x} was set aside: {why}; built from another struct "
                                     "holding the position, found in the same process",
                          "reason": f"{why}: its kind of struct has others like it; observed another struct holding "
                                    "the position in the same process"})
            self._report(f"{why}: observing another struct holding the position", 0.0)
            found = candidate
            observation = observe(game, reader, found.address, self.options.plan,
                                  region_filter=self.options.finder.region_filter)
        return found, observation, aside

    def _crowded(self, observation: Observation) -> str | None:
        """Why a struct is crowded, in one process: others like it (the best narrow patterns match elsewhere) and
        no pattern of strong bytes clear of every other place by MARGIN; None where it is not."""
        exclude = [] if self.options.flags is None else [(self.options.flags.relative, self.options.flags.relative + 8)]
        widened = choose_widening([observation], exclude, STRONG_SWEEPS)
        if widened.copies < 1 or (widened.pick is not None and widened.pick.margin >= MARGIN):
            return None
        return (f"its struct has about {widened.copies} others like it in the process, and no pattern around it was "
                f"clear of every other place by {MARGIN} bytes")

    def _locate(self, game: Closable, reader: MemoryReader, observations: list[Observation]) -> _Found:
        if observations and self._first is not None:
            address = _by_loose_pattern(reader, observations, self.options.finder.region_filter, self._first)
            if address is not None:
                read = np.frombuffer(reader.read(address, VALUE_BYTES), np.float32)
                values = cast("tuple[float, float, float]", tuple(float(v) for v in read))  # VALUE_BYTES: three
                return _Found(address, self._first.vertical, self._first.speed, values, "loose pattern",
                              right_turn=self._first.right_turn)
        self._report(f"finding the position in process {len(observations) + 1}", 0.0)
        options = self.options.finder
        if observations or self._unlike:
            options = replace(options, top=max(options.top, LOCATE_CANDIDATES))
        finder = PositionFinder(game, reader, options)
        result = finder.run(self.progress, self.cancel)
        if not result.candidates:
            raise FinderError("the motion finder found no position in this process")
        if not observations:
            self._alternatives = result.candidates
        if not observations and self._unlike:
            return self._other_struct(game.pid, reader, result.candidates)
        best = result.candidates[0]
        how = "motion finder"
        if observations:
            scored = [(_similarity(reader, c.address, observations[0]), c) for c in result.candidates]
            # A sibling copy in a structure like process 1's (the eye's position beside the feet's) is as
            # similar: the height at rest tells them apart.
            level = [(s, c) for s, c in scored if _same_height(c.values, self._first)] or scored
            similarity, best = likest_first(level)
            rank = {id(c): i for i, c in enumerate(result.candidates)}
            likest = [{"address": hex(c.address), "rank": rank[id(c)] + 1, "similarity": round(s, 3),
                       "score": round(c.score, 3), "values": [round(v, 3) for v in c.values]}
                      for s, c in sorted(scored, key=lambda pair: -pair[0])[:LIKEST_KEPT]]
            if similarity < MIN_SIMILARITY:
                top = result.candidates[0]
                # Should this process become process 1: its best copy, of a struct not set aside where one was
                other = None if self._set_aside_first is None else \
                    _other_candidate(reader, result.candidates, self._set_aside_first, self._unlike)
                own = other or _Found(top.address, top.vertical, top.speed, top.values,
                                      "motion finder (the first process's copy had no like here: built from this one)",
                                      right_turn=top.right_turn)
                self._alternatives = result.candidates   # this process's, should it become process 1
                raise _Unmatched(f"the best of {len(scored)} candidates has surroundings only {similarity:.0%} like "
                                 f"process 1's (needs {MIN_SIMILARITY:.0%})", likest, own)
            how = f"motion finder, surroundings {similarity:.0%} like process 1"
            return _Found(best.address, best.vertical, best.speed, best.values, how, likest, best.right_turn)
        return _Found(best.address, best.vertical, best.speed, best.values, how, right_turn=best.right_turn)

    def _fall_back(self, result: BuildResult, why: str, observations: list[Observation]) -> BuildResult:
        """No signature can be unique: the pointer search, by itself (static roots first)."""
        options, first = self.options, self._first
        assert first is not None
        if not options.pointer_fallback:
            result.message = f"{why}; try a pointer chain: `memory pointers`"
            return result
        pids = [o.pid for o in observations] or [pid for entry in result.skipped if entry.get("set_aside")
                                                  for pid in entry.get("pids", [entry["pid"]])]
        self._report(f"{why}: falling back to the pointer search", 0.0)
        draft = ProfileDraft(options.name, options.game, options.game_version, None, first.vertical, first.values,
                             options.scale, options.units, scan_perms=options.finder.region_filter.perms,
                             provenance=[f"No signature: {why} (pids {', '.join(str(pid) for pid in pids)})."],
                             right_turn=first.right_turn)
        expected = first.speed * abs(options.scale) if first.speed else None
        fallback = to_pointers(self.launcher, options.finder, draft, options.verify, expected, self.progress,
                               first.right_turn)
        result.pointers = fallback.report
        result.verifications = fallback.verifications
        result.ok = fallback.ok
        result.message = f"{why}; fell back to the pointer search: {fallback.message}"
        if fallback.ok:
            result.profile_data, result.draft = fallback.profile_data, fallback.draft
        return result

    def _draft(self, pick: Pick, observations: list[Observation]) -> ProfileDraft:
        options, first = self.options, self._first
        assert first is not None
        provenance = [f"Signature built from {len(observations)} processes "
                      f"(pids {', '.join(str(o.pid) for o in observations)}) by the motion-guided finder;",
                      f"{pick.literals} literal bytes of {len(pick.pattern)}, of which up to {pick.tolerance} may "
                      "differ in a launch (max_mismatches; still unique with that many in every build process);",
                      f"every other place in the build processes differed from it in more than "
                      f"{pick.tolerance + pick.margin} literal bytes." if pick.margin >= MARGIN else
                      f"NO MARGIN: no pattern was clear of every other place by {MARGIN} more bytes than it allows, "
                      "so another object may match it in some launch."]
        perms = options.finder.region_filter.perms
        return ProfileDraft(options.name, options.game, options.game_version, pick, first.vertical, first.values,
                            options.scale, options.units, options.flags, scan_perms=perms,
                            path_contains=options.finder.region_filter.path_contains, provenance=provenance,
                            right_turn=first.right_turn)


def _other_candidate(reader: MemoryReader, candidates: list[RankedTriple], before: _Found,
                     unlike: list[Observation]) -> _Found | None:
    """The best-ranked of `candidates` that holds the position now (at `before`'s height), turns the same way, and
    sits in surroundings unlike each of `unlike`'s: another kind of struct, not one more of theirs."""
    for rank, candidate in enumerate(candidates, 1):
        if candidate.address == before.address or candidate.vertical != before.vertical:
            continue
        if turn_sign(candidate.right_turn) * turn_sign(before.right_turn) < 0:
            continue
        triple = np.frombuffer(reader.read(candidate.address, VALUE_BYTES), np.float32)
        if len(triple) != 3 or not np.isfinite(triple).all() or not _same_height(triple.tolist(), before):
            continue
        likeness = max(_similarity(reader, candidate.address, reference) for reference in unlike)
        if likeness < MIN_SIMILARITY:
            values = (float(triple[0]), float(triple[1]), float(triple[2]))
            how = f"motion finder, rank {rank}: the best unlike the struct(s) set aside ({likeness:.0%} like)"
            return _Found(candidate.address, candidate.vertical, candidate.speed, values, how,
                          right_turn=candidate.right_turn)
    return None


def _signature_message(pick: Pick, processes: int, verified: int) -> str:
    message = (f"signature of {len(pick.pattern)} bytes ({pick.literals} literal, {pick.tolerance} may differ) unique "
               f"in {processes} processes and verified on {verified} more")
    if pick.margin < MARGIN:
        message += (f"; warning: no pattern was clear of every other place by {MARGIN} bytes, so another object may "
                    "match it in some launch: check it on more restarts")
    return message


def choose_from_subsets(observations: list[Observation],
                        exclude: list[tuple[int, int]] | None) -> tuple[Widened, list[Observation]]:
    """A pattern from all the processes, or else from the largest group of them (at least two) that has one; a
    pattern of strong bytes from any group before one that needs weak bytes (copies.SWEEPS says why).

    The copy of the value the motion finder takes in each process is the likest to process 1's, and on Minetest
    several structs holding the position are about as alike (77-85%): the processes then hold different structs,
    and no pattern is common to all of them while two of the same struct have one. Measured on 6 fresh Minetest
    processes: pairs 0+1, 1+2 and 0+1+2 had none; 2+3, 0+4 and 4+5 did, and 2+3's matched the position in every
    other process. A pattern of weak bytes from a pair (zeros beside 1.0 floats) matched nowhere in two fresh
    launches in a later run. Verification on fresh processes is the judge of a pattern from a group."""
    groups = [observations]
    if len(observations) >= 3:
        groups += [list(group) for size in range(len(observations) - 1, 1, -1)
                   for group in itertools.combinations(observations, size)]
    whole: Widened | None = None
    hopeless = True
    for sweeps in (STRONG_SWEEPS, WEAK_SWEEPS):
        for group in groups:
            widened = choose_widening(group, exclude, sweeps)
            if widened.pick is not None:
                return widened, group
            whole = whole or widened
            hopeless = hopeless and widened.hopeless
    assert whole is not None  # groups holds at least all the observations
    return Widened(None, whole.model, whole.copies, hopeless), observations


def _alike(first: Observation, second: Observation) -> float:
    """Share of the bytes around the value (up to BEFORE and AFTER of it, the value left out) that two processes'
    first windows have in common."""
    low, high = max(first.low, second.low, -BEFORE), min(first.high, second.high, VALUE_BYTES + AFTER)
    one = np.frombuffer(first.windows[0], np.uint8)[low - first.low:high - first.low]
    two = np.frombuffer(second.windows[0], np.uint8)[low - second.low:high - second.low]
    return _share_equal(one, two, low)


def _share_equal(here: np.ndarray, there: np.ndarray, low: int) -> float:
    """Share of equal bytes in two windows that start `low` bytes from the value, the value's own bytes left out."""
    outside = np.ones(len(here), bool)
    outside[-low:-low + VALUE_BYTES] = False
    return float((here[outside] == there[outside]).mean()) if outside.any() else 0.0


def likest_first(scored: list[tuple[float, RankedTriple]]) -> tuple[float, RankedTriple]:
    """Of candidates in rank order, each with its similarity to process 1's surroundings: the most similar, and of
    copies of one struct (a snapshot ring, a pool, a shadow: all as similar, within SAME_STRUCT) the best ranked,
    the game's own, the one that leads when a walk ends."""
    most = max(s for s, _ in scored)
    return next((s, c) for s, c in scored if s >= most - SAME_STRUCT)


def _same_height(values: tuple[float, ...] | list[float], first: _Found | None) -> bool:
    """Whether `values` stand at process 1's height, within a quarter second's walk (every process starts
    in the same state; unknown speed: yes)."""
    if first is None or not first.speed:
        return True
    return abs(float(values[first.vertical]) - first.values[first.vertical]) <= 0.25 * first.speed


def _by_loose_pattern(reader: MemoryReader, observations: list[Observation],
                      region_filter: RegionFilter, first: _Found | None = None) -> int | None:
    """The value's address in a new process, if a pattern from the processes so far finds it uniquely, in
    surroundings like process 1's and at its height: a loose pattern can also find a sibling copy of
    the position (on Minetest, once, one 1.26 nodes higher, in a structure 85% alike), and observing
    that would leave no pattern unique in every process."""
    model = derive(observations)
    tries = candidate_windows(model, allow_zero=False)[:4] + candidate_windows(model, allow_zero=True)[:2]
    for _, a, b, mask in tries:
        pattern = parse_pattern(pattern_text(model.values[a:b], mask))
        matches = scan(reader, pattern, region_filter)
        if len(matches) == 1:
            address = matches[0].address - (a + model.low)
            triple = np.frombuffer(reader.read(address, VALUE_BYTES), np.float32)
            if (len(triple) == 3 and np.isfinite(triple).all() and _same_height(triple.tolist(), first)
                    and _similarity(reader, address, observations[0]) >= MIN_SIMILARITY):
                return address
    return None


def _similarity(reader: MemoryReader, address: int, observation: Observation) -> float:
    """Share of bytes around `address` (up to BEFORE and AFTER of it) equal to those around the value in
    `observation`."""
    low, high = max(observation.low, -BEFORE), min(observation.high, VALUE_BYTES + AFTER)
    data = reader.read(address + low, high - low)
    if len(data) != high - low:
        return 0.0
    here = np.frombuffer(data, np.uint8)
    there = np.frombuffer(observation.windows[0], np.uint8)[low - observation.low:high - observation.low]
    return _share_equal(here, there, low)
