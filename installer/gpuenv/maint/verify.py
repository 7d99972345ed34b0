"""`gpuenv recipes verify --artifacts`: the knowledge base's arch lists against the wheels.

For each CUDA build row whose wheels an index serves, one wheel is picked (one per release,
platform and project: the architectures are compiled once per build, not per Python), its
shared libraries are streamed and their fatbin headers read (maint.artifacts), and the
SASS and PTX lists of the whole wheel are compared with the row's archset. The binary is the
authority: a row that differs is wrong (ARCHITECTURE.md, "measured beats declared").
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import urlsplit

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuenv.index.remote_wheel import (
    CHUNK,
    BoundExceeded,
    Budget,
    WheelReadError,
    open_local,
)
from gpuenv.index.simple import followable
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.maint.artifacts import LibraryArchs, build_lists, union, wheel_archs
from gpuenv.output import shown
from gpuenv.recipes.check import Finding
from gpuenv.recipes.fatbin import FatbinError, sorted_ccs
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import ArchSet, Build, Release

# A whole run: linux-64 has about 285 build rows, whose wheels' libraries are some 200 GB, one to
# two hours on a 50 MB/s link. Eight hours lets a slow link finish and still ends a run against
# an index that drips every wheel (285 x WHEEL_SECONDS would be six days) within a working day.
RUN_SECONDS = 8 * 3600.0


@dataclass(frozen=True)
class Target:
    """One build row to measure: where its wheels are and what the row says they hold."""

    framework: str
    release: str
    project: str
    version: str  # the wheel's version, local label included (2.1.0+cu121)
    platform: str
    index: Optional[str]  # None: the default index
    archs: Optional[ArchSet]


@dataclass
class Reading:
    """What one wheel holds, next to what its row says."""

    target: Target
    wheel: str
    sha256: Optional[str]
    libraries: list[LibraryArchs] = field(default_factory=list)

    @property
    def sass(self) -> list[str]:
        """The build's SASS list (maint.artifacts.build_lists)."""
        return build_lists(self.libraries)[0]

    @property
    def ptx(self) -> list[str]:
        return build_lists(self.libraries)[1]

    def differences(self) -> list[str]:
        """How the row differs from the binary; [] when they agree."""
        row = self.target.archs
        if row is None:
            return ["the row names no archset"]
        out = []
        for kind, measured, recorded in (
            ("sass", set(self.sass), set(row.sass)),
            ("ptx", set(self.ptx), set(row.ptx)),
        ):
            if measured - recorded:
                out.append(
                    f"{kind} in the wheel, not in the row: {sorted_ccs(measured - recorded)}"
                )
            if recorded - measured:
                out.append(
                    f"{kind} in the row, not in the wheel: {sorted_ccs(recorded - measured)}"
                )
        return out

    def to_json(self) -> dict[str, object]:
        t = self.target
        return {
            "framework": t.framework,
            "release": t.release,
            "project": t.project,
            "platform": t.platform,
            "archset": t.archs.name if t.archs else None,
            "wheel": self.wheel,
            "sha256": self.sha256,
            "sass": self.sass,
            "ptx": self.ptx,
            "sass_in_any_fatbin": union(self.libraries)[0],
            "ptx_in_any_fatbin": union(self.libraries)[1],
            "row_sass": list(t.archs.sass) if t.archs else None,
            "row_ptx": list(t.archs.ptx) if t.archs else None,
            "differences": self.differences(),
            "libraries": [lib.to_json() for lib in self.libraries],
        }


def targets(
    kb: KnowledgeBase,
    framework: Optional[str] = None,
    release: Optional[str] = None,
    platform: str = "linux-64",
) -> list[Target]:
    """The CUDA build rows of `platform`, oldest release first, one per project and index."""
    out: list[Target] = []
    for fw in kb.frameworks.values():
        if framework and fw.name != framework:
            continue
        for rel in sorted(fw.releases, key=lambda r: r.parsed_version):
            if release and rel.version != release:
                continue
            seen: set[tuple[str, Optional[str]]] = set()
            for build in rel.builds:
                if not build.is_gpu or platform not in build.platforms:
                    continue
                # the default index's plain wheel is this build where pypi_default says so
                index = None if platform in build.pypi_default else build.index
                for project, version in _projects(fw.name, rel, build, index):
                    if (project, index) in seen:
                        continue
                    seen.add((project, index))
                    out.append(
                        Target(fw.name, rel.version, project, version, platform, index, build.archs)
                    )
    return out


def _projects(
    framework: str, rel: Release, build: Build, index: Optional[str]
) -> list[tuple[str, str]]:
    """The projects and versions whose wheels hold a build's kernels. jax's are jaxlib's on
    the JAX CUDA index (jaxlib 0.4.18+cuda12.cudnn89); from the default index, the CUDA plugin
    and the PJRT plugin (jax-cuda12-plugin, jax-cuda12-pjrt) at jaxlib's version."""
    local = build.local if index else ""
    if framework == "jax":
        version = rel.related.get("jaxlib", rel.version)
        if index:
            return [("jaxlib", version + local)]
        return [(f"jax-{build.variant}-plugin", version), (f"jax-{build.variant}-pjrt", version)]
    return [(build.package or rel.package or framework, rel.version + local)]


def pick_wheel(files: Iterable[str], version: str, platform: str) -> Optional[str]:
    """The wheel of `version` for `platform` to read: CPython 3.10 where there is one (the
    kernels do not differ by Python), else the newest CPython."""
    wanted = Version(version)
    best: Optional[tuple[int, str]] = None
    for name in files:
        if not name.endswith(".whl"):
            continue
        try:
            _, v, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if v != wanted or not any(platform in platform_of(t.platform) for t in tags):
            continue
        py = max(
            (
                int(t.interpreter[3:] or 0)
                for t in tags
                if t.interpreter.startswith("cp3") and not t.abi.endswith("t")  # free-threaded
            ),
            default=0,
        )
        rank = 1000 if py == 10 else py
        if best is None or (rank, name) > best:
            best = (rank, name)
    return best[1] if best else None


def _sha256_of_local(url: str, budget: Budget) -> Optional[str]:
    """The sha256 of a file:// wheel (a local index publishes none), read within the wheel's
    time; a FIFO or a device is refused unread (remote_wheel.open_local), and so is a file
    larger than any wheel verify reads (the budget's bytes)."""
    if urlsplit(url).scheme != "file":
        return None
    digest = hashlib.sha256()
    with open_local(url) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > budget.max_fetched:
            raise BoundExceeded(
                f"{size} bytes: more than the bound on bytes fetched per wheel"
                f" ({budget.max_fetched >> 20} MiB)"
            )
        while True:
            budget.check_time()
            block = fh.read(CHUNK)
            if not block:
                return digest.hexdigest()
            digest.update(block)


FilesGetter = Callable[[str, str], dict[str, str]]
HashesGetter = Callable[[str, str], dict[str, str]]


def choose(target: Target, default_index: str, files: FilesGetter) -> Optional[tuple[str, str]]:
    """The wheel of the target to read and its URL; None when the index has none."""
    listed = files(target.index or default_index, target.project)
    wheel = pick_wheel(listed, target.version, target.platform)
    return (wheel, listed[wheel]) if wheel is not None else None


def read_wheel(
    target: Target,
    wheel: str,
    url: str,
    index: str,
    hashes: HashesGetter,
    budget: Optional[Budget] = None,
) -> Reading:
    """Read one chosen wheel within `budget` (remote_wheel.Budget.per_wheel unless given)."""
    budget = budget or Budget.per_wheel()
    if not followable(index, url):
        raise WheelReadError(f"the index links it to {url}, not to http(s): not followed")
    sha = hashes(index, target.project).get(wheel) or _sha256_of_local(url, budget)
    libraries = wheel_archs(url, budget=budget)
    return Reading(target=target, wheel=wheel, sha256=sha, libraries=libraries)


def measure(
    target: Target,
    default_index: str,
    files: FilesGetter,
    hashes: HashesGetter,
    budget: Optional[Budget] = None,
) -> Optional[Reading]:
    """Read the target's wheel; None when the index has no wheel for it."""
    chosen = choose(target, default_index, files)
    if chosen is None:
        return None
    index = target.index or default_index
    return read_wheel(target, chosen[0], chosen[1], index, hashes, budget)


def reading_findings(file: str, reading: Reading) -> list[Finding]:
    """A reading as `recipes check` findings: a row the binary contradicts is an error. Names
    from the index and the wheel are shown escaped (gpuenv.output.shown)."""
    t = reading.target
    where = f"{file} {t.release} {t.project} {t.platform} archs={t.archs.name if t.archs else None}"
    differences = reading.differences()
    if not reading.libraries:
        return [
            Finding("warning", where, shown(f"{reading.wheel} has no fatbin in any shared library"))
        ]
    if not differences:
        return []
    return [
        Finding("error", where, shown(f"{reading.wheel} (sha256 {reading.sha256}): {d}"))
        for d in differences
    ]


def artifact_findings(
    kb: KnowledgeBase,
    default_index: str,
    files: FilesGetter,
    hashes: HashesGetter,
    framework: Optional[str] = None,
    release: Optional[str] = None,
    platform: str = "linux-64",
    on_reading: Optional[Callable[[Reading], None]] = None,
) -> list[Finding]:
    """Measure every target; an index that cannot be read is a warning naming it (nothing was
    compared), a wheel that cannot be read or that reaches a bound (remote_wheel.Budget, the
    member and fatbin limits) an error naming the wheel and what went wrong, a contradicted row
    an error. The run itself has RUN_SECONDS: what is left when they run out is one error."""
    out: list[Finding] = []
    deadline = time.monotonic() + RUN_SECONDS
    run_bound = f"the bound on time per run ({RUN_SECONDS:g} s)"
    todo = targets(kb, framework, release, platform)
    for i, target in enumerate(todo):
        file = kb.frameworks[target.framework].file
        where = f"{file} {target.release} {target.project} {target.platform}"
        if time.monotonic() >= deadline:
            left = len(todo) - i
            out.append(
                Finding("error", where, f"{run_bound} ran out: {left} build rows not measured")
            )
            break
        index = target.index or default_index
        try:
            chosen = choose(target, default_index, files)
            if chosen is None:
                continue  # no wheel of this build on that index: `check --online` reports that
            wheel, url = chosen
            try:
                budget = Budget.per_wheel(until=deadline, until_bound=run_bound)
                reading = read_wheel(target, wheel, url, index, hashes, budget)
            except (WheelReadError, FatbinError) as exc:
                out.append(Finding("error", where, shown(f"{wheel}: {exc}")))
                continue
        except (OSError, ValueError) as exc:  # requests' errors are OSErrors: not reachable
            out.append(
                Finding(
                    "warning",
                    where,
                    shown(f"could not read {target.project} from {index}: {exc}"),
                )
            )
            continue
        if on_reading:
            on_reading(reading)
        out += reading_findings(file, reading)
    return out
