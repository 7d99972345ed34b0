"""What the rules answer: a Candidate (a build that runs on the target, with what it needs there)
or a Rejection (why not, with the source and the fix), and the helpers that word them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpuenv.recipes import (
    Build,
    Release,
    Sourced,
)

# The build-naming helpers stay importable from here (assemble and the lock stage use them).
from gpuenv.resolve.availability import build_package as build_package
from gpuenv.resolve.availability import labelled_project as labelled_project
from gpuenv.resolve.availability import published_version as published_version


@dataclass(frozen=True)
class Candidate:
    """A build that runs on the target, with what it needs there."""

    release: Release
    build: Build
    pythons: tuple[str, ...]  # Python versions usable on the target, oldest first
    warnings: tuple[str, ...]
    companions: tuple[str, ...]  # pins this candidate needs on this target (installed)
    constraints: tuple[str, ...]  # caps on packages it may pull in (cuDNN for old GPUs)
    on_gpu: bool  # False for CPU builds, and for CUDA builds taken to run on the CPU
    # Why each cap in `constraints` is there, with the row it rests on.
    constraint_reasons: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        return self.release.framework

    # A CUDA build run on the CPU leaves out what only the GPU needs: the extra that brings the
    # CUDA wheels and the conda CUDA libraries (a wheel's unconditional requirements stay).
    @property
    def extra(self) -> Optional[str]:
        return self.build.extra if self.on_gpu else None

    @property
    def pip_libs(self) -> tuple[str, ...]:
        return self.build.pip_libs if self.on_gpu or not self.build.extra else ()

    @property
    def conda_libs(self) -> tuple[str, ...]:
        return self.build.conda_libs if self.on_gpu else ()

    @property
    def label(self) -> str:
        return candidate_label(self.release, self.build)


@dataclass(frozen=True)
class Rejection:
    """A build that does not run on the target, the rule that says so, and its source."""

    framework: str
    version: str
    variant: str
    rule: str
    message: str
    needs_driver: Optional[str] = None  # the driver that would lift this rejection, if only that
    source: str = ""  # the knowledge-base row the rejection rests on: its primary source
    caveat: str = ""  # when that row is unverified, or its builds are recorded as incomplete

    @property
    def label(self) -> str:
        return f"{self.framework} {self.version} [{self.variant}]"


def cite(row: Sourced, *, incomplete: bool = False) -> tuple[str, str]:
    """(source, caveat) of a knowledge-base row, for a rejection that rests on it."""
    caveats = []
    if incomplete:
        caveats.append(
            "rests on data marked incomplete (builds_complete = false): a build missing from"
            " recipes/ may exist"
        )
    if not row.verified:
        caveats.append(
            "the row is not verified against its source" + (f" ({row.note})" if row.note else "")
        )
    return row.source, "; ".join(caveats)


def candidate_label(release: Release, build: Build) -> str:
    return f"{release.framework} {release.version} [{build.variant}]"


def rejection(
    release: Release,
    build: Build,
    rule: str,
    message: str,
    needs_driver: Optional[str],
    row: Sourced,
    *,
    incomplete: bool = False,
) -> Rejection:
    """A build refused by `rule`, citing the knowledge-base row the refusal rests on."""
    source, caveat = cite(row, incomplete=incomplete)
    return Rejection(
        release.framework,
        release.version,
        build.variant,
        rule,
        message,
        needs_driver,
        source=source,
        caveat=caveat,
    )
