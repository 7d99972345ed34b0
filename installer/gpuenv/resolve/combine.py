"""Choosing one candidate per framework so that they can share one environment.

Each framework's candidates are ranked best first (GPU builds before CPU builds, newer releases
before older, newer CUDA before older). The search visits combinations in order of
(frameworks left on the CPU, sum of ranks): incrementing one rank never lowers that key, so a
best-first walk from all-zeros meets the best compatible combination first.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Union

from packaging.version import InvalidVersion, Version

from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.ranked import Ranked
from gpuenv.resolve.requirements import Pin, RequirementError, parse_pin
from gpuenv.resolve.rules import Candidate
from gpuenv.versions import version_key

MAX_VISITS = 200_000
Ranks = Union[Sequence[Candidate], Ranked]  # a framework's candidates, best first


@dataclass(frozen=True)
class Conflict:
    """Why two chosen candidates cannot share one environment."""

    message: str


def common_pythons(chosen: Sequence[Candidate]) -> list[str]:
    sets = [set(c.pythons) for c in chosen]
    common = set.intersection(*sets) if sets else set()
    return sorted(common, key=version_key)


def nvidia_wheels(cand: Candidate, kb: Optional[KnowledgeBase]) -> tuple[str, ...]:
    """The NVIDIA wheel requirements a candidate brings: its recorded pins, or, where a Linux
    CUDA build's own pins are not recorded, the packages nvidia.toml's [[unpinned]] row says its
    kind of build takes (with no version: `nvidia-cudnn-cu12`)."""
    if cand.pip_libs or kb is None or not cand.on_gpu:
        return cand.pip_libs
    row = kb.assumed_nvidia(cand.release, cand.build)
    if row is None:
        return ()
    major = (cand.build.cuda or "").split(".", 1)[0]
    return tuple(p.replace("{major}", major) for p in row.packages)


def conflict(chosen: Sequence[Candidate], kb: Optional[KnowledgeBase] = None) -> Optional[Conflict]:
    """Why these candidates cannot share one environment, or None."""
    return _conflict(chosen, _Wheels(kb))


class _Wheels:
    """The NVIDIA wheels each candidate brings, by name and by library, worked out once per
    search: the search weighs each candidate against many others (90 combinations, ~2 ms of
    `resolve torch tensorflow`, were mostly this). Keyed by identity: the candidates outlive it."""

    def __init__(self, kb: Optional[KnowledgeBase]) -> None:
        self.kb = kb
        self._named: dict[int, tuple[tuple[str, str], ...]] = {}
        self._libraries: dict[int, tuple[tuple[str, str, str], ...]] = {}

    def named(self, cand: Candidate) -> tuple[tuple[str, str], ...]:
        """(project name, requirement text) of each NVIDIA wheel the candidate brings."""
        found = self._named.get(id(cand))
        if found is None:
            found = self._named[id(cand)] = _named(nvidia_wheels(cand, self.kb))
        return found

    def libraries(self, cand: Candidate) -> tuple[tuple[str, str, str], ...]:
        """(nvidia.toml library, project name, requirement text) of each of those wheels that
        belongs to a library; none without a knowledge base."""
        found = self._libraries.get(id(cand))
        if found is None:
            kb = self.kb
            found = tuple(
                (library, name, text)
                for name, text in self.named(cand)
                if kb is not None and (library := kb.library_of(name)) is not None
            )
            self._libraries[id(cand)] = found
        return found


def _conflict(chosen: Sequence[Candidate], wheels: _Wheels) -> Optional[Conflict]:
    if len(chosen) > 1 and not common_pythons(chosen):
        parts = "; ".join(f"{c.label}: {', '.join(c.pythons)}" for c in chosen)
        return Conflict(f"no Python version in common ({parts})")
    return (
        _shared_folder_conflict(chosen, wheels)
        or _unknown_pins_conflict(chosen, wheels)
        or _library_conflict(chosen)
    )


def _unknown_pins_conflict(chosen: Sequence[Candidate], wheels: _Wheels) -> Optional[Conflict]:
    """A GPU build whose NVIDIA wheel versions are not recorded cannot be shown to agree with
    another framework taking the same NVIDIA packages (or, where not even the packages are
    known, any): the search goes on to a combination that can be checked."""
    if wheels.kb is None or len(chosen) < 2:
        return None
    for cand in chosen:
        if not cand.on_gpu or not cand.build.nvidia_pins_unknown:
            continue
        assumed = {name for name, _ in wheels.named(cand)}
        for other in chosen:
            if other is cand:
                continue
            theirs = {name for name, _ in wheels.named(other)}
            shared = sorted(assumed & theirs) if assumed else sorted(theirs)
            if shared:
                return Conflict(
                    f"{cand.label}: its NVIDIA wheel versions are not recorded (its index could"
                    f" not be read), so whether it agrees with {other.label} on"
                    f" {', '.join(shared[:3])} cannot be checked"
                )
    return None


@lru_cache(maxsize=512)  # the search weighs each candidate's wheels against many others
def _named(texts: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(project name, requirement text) of each requirement that parses."""
    out = []
    for text in texts:
        try:
            out.append((parse_pin(text).name, text))
        except RequirementError:
            continue
    return tuple(out)


def _shared_folder_conflict(chosen: Sequence[Candidate], wheels: _Wheels) -> Optional[Conflict]:
    """Two packages of one NVIDIA library (nvidia-cudnn-cu12 and -cu13) install into one
    folder: whichever installs last wins the shared files, so at most one may be planned."""
    if wheels.kb is None or len(chosen) < 2:
        return None
    taken: dict[str, list[tuple[str, Candidate, str]]] = {}  # library -> (package, by, text)
    for cand in chosen:
        for library, name, text in wheels.libraries(cand):
            taken.setdefault(library, []).append((name, cand, text))
    for library, uses in sorted(taken.items()):
        for package, cand, text in uses:
            for other_package, other, other_text in uses:
                if other is not cand and other_package != package:
                    return Conflict(
                        f"{library}: {cand.label} takes {text}, {other.label} takes"
                        f" {other_text}; both install into the same folder (two builds of"
                        f" {library} on one path)"
                    )
    return None


def _library_conflict(chosen: Sequence[Candidate]) -> Optional[Conflict]:
    """Shared CUDA library wheels must admit one version (torch pins ==, TF pins ==)."""
    by_name: dict[str, list[tuple[Candidate, Pin]]] = {}
    for cand in chosen:
        for text in (*cand.pip_libs, *cand.companions, *cand.constraints):
            try:
                req = parse_pin(text)
            except RequirementError:
                continue
            by_name.setdefault(req.name, []).append((cand, req))
    for name, reqs in by_name.items():
        owners = {c.label for c, _ in reqs}
        if len(owners) < 2:
            continue
        pins = [s.version for _, r in reqs for s in r.specifier if s.operator == "=="]
        for pin in pins:
            try:
                version = Version(pin)
            except InvalidVersion:
                continue
            for cand, req in reqs:
                if not req.specifier.contains(version, prereleases=True):
                    return Conflict(
                        f"{name}: {cand.label} needs {req.specifier}, another needs =={pin}"
                    )
    # Conda packages: one version per name in a conda environment.
    conda: dict[str, tuple[str, str]] = {}
    for cand in chosen:
        for spec in cand.conda_libs:
            conda_name, _, wanted = spec.partition("=")
            if conda_name in conda and conda[conda_name][0] != wanted:
                have, owner = conda[conda_name]
                return Conflict(
                    f"conda {conda_name}: {owner} needs {have}, {cand.label} needs {wanted}"
                )
            conda[conda_name] = (wanted, cand.label)
    return None


def best_combination(
    ranked: Sequence[Ranks],
    kb: Optional[KnowledgeBase] = None,
) -> tuple[Optional[tuple[Candidate, ...]], list[Conflict]]:
    """The best compatible combination, and the conflicts met on the way (for explain).

    Each of `ranked` lists a framework's GPU candidates before its CPU ones; a `Ranked` one is
    evaluated only as far as the search reads it.
    """
    if not all(_has(r, 0) for r in ranked):
        return None, []
    n = len(ranked)
    # a framework with no GPU candidate at all is on the CPU in every combination: not counted
    gpu_first = [r[0].on_gpu for r in ranked]

    def key(idx: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        on_cpu = sum(1 for i in range(n) if gpu_first[i] and not ranked[i][idx[i]].on_gpu)
        return on_cpu, sum(idx), idx

    wheels = _Wheels(kb)
    start = (0,) * n
    heap = [key(start)]
    seen = {start}
    conflicts: list[Conflict] = []
    visits = 0
    while heap and visits < MAX_VISITS:
        _, _, idx = heapq.heappop(heap)
        visits += 1
        chosen = tuple(ranked[i][idx[i]] for i in range(n))
        found = _conflict(chosen, wheels)
        if found is None:
            return chosen, conflicts
        if len(conflicts) < 20:
            conflicts.append(found)
        for i in range(n):
            if _has(ranked[i], idx[i] + 1):
                nxt = (*idx[:i], idx[i] + 1, *idx[i + 1 :])
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, key(nxt))
    return None, conflicts


def _has(ranked: Ranks, index: int) -> bool:
    """Whether `ranked` has a candidate at `index` (a Ranked one is read up to it)."""
    try:
        ranked[index]
    except IndexError:
        return False
    return True
