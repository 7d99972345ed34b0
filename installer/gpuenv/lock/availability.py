"""What the reachable sources publish of each framework, so resolve only picks what can be had.

Sources: the index of every build the knowledge base records for the target platform, the
user's configured indexes, and their find-links folders. A source that does not answer becomes
a note ("https://download.pytorch.org/whl/cu118: unreachable (...)") and the plan falls back to
what the others have.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlsplit

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpuenv.index.config import (
    IndexConfig,
    IndexConfigError,
    UvSources,
    default_index_url,
    uv_sources,
)
from gpuenv.index.simple import fetch_filenames, unknown_host
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.lock.probe_cache import cached_filenames, failure_text
from gpuenv.machine import Machine
from gpuenv.output.redact import redact_text
from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.fresh import newer_releases
from gpuenv.resolve.plan import Plan
from gpuenv.resolve.rules import labelled_project
from gpuenv.resolve.target import Availability

PROBE_TIMEOUT = 15.0


def framework_packages(
    kb: KnowledgeBase, frameworks: Iterable[str], platform: str, *, gpu: bool = True
) -> dict[str, set[str]]:
    """package -> the indexes (besides the user's) that publish it for the platform. `gpu=False`
    (a plan for the CPU): without the indexes of CUDA builds, which such a plan never weighs
    (resolve.candidates: only a CUDA build the user's index publishes can run on its CPU)."""
    out: dict[str, set[str]] = {}
    for name in frameworks:
        for release in kb.framework(name).releases:
            for build in release.builds:
                if platform not in build.platforms:
                    continue
                indexes = out.setdefault(labelled_project(release, build), set())
                if build.index and platform not in build.pypi_default and (gpu or not build.is_gpu):
                    indexes.add(build.index)
    return out


class _Found:
    """What the sources list for one package: versions, where each is, for which Pythons."""

    def __init__(self) -> None:
        self.sources: dict[str, list[str]] = {}
        self.pythons: dict[str, set[str]] = {}

    def add(self, filenames: Iterable[str], platform: str, source: str) -> None:
        for name in filenames:
            name = unquote(name)
            if not name.endswith(".whl"):
                continue
            try:
                _, version, _, tags = parse_wheel_filename(name)
            except (InvalidWheelFilename, ValueError):
                continue
            matching = [
                t for t in tags if t.platform == "any" or platform in platform_of(t.platform)
            ]
            if not matching:
                continue
            sources = self.sources.setdefault(str(version), [])
            if source not in sources:
                sources.append(source)
            self.pythons.setdefault(str(version), set()).update(
                _python_of(t.interpreter) for t in matching
            )


def _uv_sources(notes: dict[str, str]) -> UvSources:
    """uv's own indexes and find-links. One gpuenv cannot read is left unprobed, like an
    unreachable index (uv reads its configuration itself; a portable lock refuses it)."""
    try:
        return uv_sources()
    except IndexConfigError as exc:
        notes["uv configuration"] = str(exc)
        return UvSources()


def _python_of(interpreter: str) -> str:
    """cp311 -> 3.11; py3 and anything else -> * (any Python)."""
    if interpreter.startswith("cp") and len(interpreter) > 3:
        return f"{interpreter[2]}.{interpreter[3:]}"
    return "*"


def gather(
    kb: KnowledgeBase,
    frameworks: Iterable[str],
    platform: str,
    config: IndexConfig,
    *,
    gpu: bool = True,
) -> Availability:
    """What the sources publish of the frameworks' packages; `gpu=False`: for a plan that
    runs on the CPU (framework_packages)."""
    frameworks = list(frameworks)
    packages = framework_packages(kb, frameworks, platform, gpu=gpu)
    unreachable: dict[str, str] = {}
    uv = _uv_sources(unreachable)  # a mirror set up for uv only (UV_INDEX, uv.toml) counts too
    if config.no_index:  # pip's no-index: find-links folders only
        user_indexes: list[str] = []
    else:
        user_indexes = [config.index_url or default_index_url(), *config.extra_index_urls]
        user_indexes = list(dict.fromkeys([*uv.indexes, *user_indexes]))
    jobs = [
        (pkg, idx)
        for pkg, extra in sorted(packages.items())
        for idx in [*user_indexes, *sorted(extra)]
    ]
    found = {pkg: _Found() for pkg in packages}

    def probe(job: tuple[str, str]) -> tuple[str, str, list[str] | Exception]:
        pkg, index = job
        try:
            return (
                pkg,
                index,
                cached_filenames(index, pkg, _fetch, _is_missing_project, is_gone=unknown_host),
            )
        except Exception as exc:  # every failure is a note, never a crash
            return pkg, index, exc

    with ThreadPoolExecutor(max_workers=8) as pool:
        for pkg, index, result in pool.map(probe, jobs):
            if isinstance(result, Exception):
                if not _is_missing_project(result):
                    # a note the user sees and the error quotes: never the index's password
                    shown = redact_text(f"{index}: unreachable ({failure_text(result)})")
                    unreachable[index] = shown
                continue
            found[pkg].add(result, platform, index)
    for link in [*config.find_links, *uv.find_links]:
        folder = unquote(link[len("file://") :]) if link.startswith("file://") else link
        if os.path.isdir(folder):
            files = os.listdir(folder)
            for pkg in packages:
                mine = [f for f in files if _project_of(f) == pkg]
                found[pkg].add(mine, platform, Path(folder).as_uri())
    versions = {pkg: {v: tuple(s) for v, s in f.sources.items()} for pkg, f in found.items()}
    return Availability(
        versions=versions,
        newer=tuple(newer_releases(kb, frameworks, versions)),
        unreachable=tuple(sorted(unreachable.values())),
        pythons={pkg: {v: frozenset(p) for v, p in f.pythons.items()} for pkg, f in found.items()},
    )


def _fetch(index: str, project: str) -> list[str]:
    return fetch_filenames(index, project, timeout=PROBE_TIMEOUT)


def _is_missing_project(exc: Exception) -> bool:
    if isinstance(exc, FileNotFoundError):
        return True
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) == 404


def _project_of(filename: str) -> str | None:
    try:
        return str(parse_wheel_filename(unquote(filename))[0])
    except (InvalidWheelFilename, ValueError):
        return None


def unreachable_that_mattered(available: Availability, plan: Plan) -> list[str]:
    """The unreachable sources that cost this plan a candidate: the only ones worth a word."""
    missed = " ".join(r.message for r in plan.rejected if r.rule == "unavailable")
    return [note for note in available.unreachable if note.split(": ", 1)[0] in missed]


_UNREACHABLE = re.compile(r"(?P<url>\S+): unreachable \((?P<why>.*)\)", re.DOTALL)


def one_line_per_host(notes: Sequence[str]) -> list[str]:
    """The unreachable notes, one per host and cause: a host that does not answer is one line,
    not one per index it serves (the PyTorch index has one per CUDA version)."""
    groups: dict[tuple[str, str], list[str]] = {}
    first: dict[tuple[str, str], str] = {}  # each group's first note, as it was
    out: list[object] = []  # a note as it is, or the key of its group, in first-seen order
    for note in notes:
        found = _UNREACHABLE.fullmatch(note)
        if found is None:
            out.append(note)
            continue
        parts = urlsplit(found["url"])
        key = (f"{parts.scheme}://{parts.netloc}", found["why"])
        if key not in groups:
            groups[key], first[key] = [], note
            out.append(key)
        groups[key].append(parts.path.rstrip("/") or "/")
    lines = []
    for item in out:
        if isinstance(item, str):
            lines.append(item)
            continue
        assert isinstance(item, tuple)
        host, why = item
        paths = groups[item]
        if len(paths) == 1:
            lines.append(first[item])
        else:
            lines.append(
                f"{host}: unreachable ({why}), for its {len(paths)} indexes {', '.join(paths)}"
            )
    return lines


@dataclass(frozen=True)
class SourcedPlan:
    plan: Plan  # what the reachable sources allow
    ideal: Plan  # what `gpuenv resolve` prints: every source reachable
    available: Availability
    fallback: tuple[str, ...] = ()  # each build the plan lost and what it got instead

    @property
    def fresh(self) -> tuple[str, ...]:
        """Releases the sources publish that the knowledge base lacks, one line each."""
        return self.available.newer

    def notes(self) -> list[str]:
        unreachable = unreachable_that_mattered(self.available, self.plan)
        return [*one_line_per_host(unreachable), *self.fresh]


def resolve_with_sources(
    machine: Machine,
    requirements: Sequence[str],
    kb: KnowledgeBase,
    config: IndexConfig,
    ideal: Optional[Plan] = None,
    fallback: str = "gpu",
    cpu_flag: str = "--allow-cpu-fallback",
    **resolve_args: Any,
) -> SourcedPlan:
    """Resolve twice: as if every source answered, and limited to what the sources publish.

    When only the second fails and a source did not answer, the network is what failed, not
    the requirements: that is a SourceUnreachableError (exit 5) naming the sources. `ideal`:
    the first, when the caller has resolved it already (`gpuenv lock` starts uv on it while
    the sources are asked). `fallback`: what the lock accepts when the sources lack the
    ideal plan's builds (gpuenv.lock.fallback); refused fallbacks raise FallbackRefusedError
    (exit 5), named by `cpu_flag` in how to accept a CPU one.
    """
    from gpuenv.lock.errors import SourceUnreachableError
    from gpuenv.lock.fallback import check_fallback, with_fallback_warnings
    from gpuenv.resolve import ResolveError, resolve
    from gpuenv.resolve.requirements import parse_requirements

    frameworks = [r.framework for r in parse_requirements(list(requirements))]
    if ideal is None:
        ideal = resolve(machine, requirements, kb=kb, every_rejection=False, **resolve_args)
    # a plan for the CPU (no NVIDIA GPU, or --no-gpu: resolve.target's wants_gpu) asks no
    # index that publishes only CUDA builds (the JAX CUDA releases page, PyTorch's cu* indexes)
    gpu = bool(machine.gpus) and not resolve_args.get("no_gpu")
    available = gather(kb, frameworks, machine.platform, config, gpu=gpu)
    try:
        plan = resolve(machine, requirements, kb=kb, available=available, **resolve_args)
    except ResolveError as exc:
        if not available.unreachable:
            raise
        raise SourceUnreachableError(
            "could not reach "
            + "; ".join(one_line_per_host(available.unreachable))
            + f". Without those sources: {exc}. Check the index URL (pip's configuration, PIP_INDEX_URL)"
            " and the network, then retry."
        ) from exc
    lines = check_fallback(ideal, plan, fallback, cpu_flag=cpu_flag)
    return SourcedPlan(with_fallback_warnings(ideal, plan), ideal, available, tuple(lines))
