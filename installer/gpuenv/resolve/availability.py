"""What the reachable sources publish (found by the lock stage), and how a build's files are
named there: the project that carries its label and the version string it is published under.

Resolve stays pure: the lock stage fills `Availability` in, and these helpers only read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from gpuenv.recipes import PLATFORM_PROJECT, Build, Release


@dataclass(frozen=True)
class Availability:
    """What the reachable sources publish, as the lock stage found it (resolve stays pure)."""

    versions: Mapping[str, Mapping[str, tuple[str, ...]]]  # package -> version -> sources
    unreachable: tuple[str, ...] = ()  # sources that did not answer, and why
    # package -> version -> Pythons ("3.11") with a wheel for the platform; "*" for any Python
    pythons: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    # One line per framework whose sources publish a release the knowledge base lacks.
    newer: tuple[str, ...] = ()


def build_package(release: Release, build: Build) -> str:
    return build.package or release.package or release.framework


def labelled_project(release: Release, build: Build) -> str:
    """The project whose files carry this build's local label on its index: the framework's own
    (torch 2.7.1+cu118), or, for a labelled build of a pure-Python framework, the companion with
    its compiled code (jaxlib 0.4.18+cuda12.cudnn89 for jax[cuda12_pip] 0.4.18)."""
    companion = PLATFORM_PROJECT.get(release.framework)
    if build.local and companion and companion in release.related:
        return companion
    return build_package(release, build)


def published_version(release: Release, build: Build, platform: str) -> str:
    """The version string of the labelled project's files for this build: "2.7.1+cu118" on its
    index, "2.7.1" as default; for jax[cuda12_pip] 0.4.18, jaxlib's "0.4.18+cuda12.cudnn89"."""
    project = labelled_project(release, build)
    base = release.version if project == build_package(release, build) else release.related[project]
    if platform in build.pypi_default or build.index is None:
        return base
    return base + build.local


def unavailable(
    available: Optional[Availability], release: Release, build: Build, platform: str
) -> Optional[str]:
    """Why no reachable source has this build's files, when the lock looked (None otherwise)."""
    if available is None or platform not in build.platforms:
        return None
    package = labelled_project(release, build)
    known = available.versions.get(package)
    if known is None:
        return None
    version = published_version(release, build, platform)
    if version in known:
        return None
    unreachable = [u for u in available.unreachable if build.index and u.startswith(build.index)]
    if unreachable:
        return (
            f"its index {build.index} is unreachable, and no other source has {package}=={version}"
        )
    return f"no reachable source has {package}=={version} for {platform}"


def available_pythons(
    available: Optional[Availability],
    release: Release,
    build: Build,
    platform: str,
    pythons: tuple[str, ...],
) -> tuple[str, ...]:
    """Only the Pythons the reachable sources have this build's wheels for (when known)."""
    if available is None:
        return pythons
    version = published_version(release, build, platform)
    have = available.pythons.get(labelled_project(release, build), {}).get(version)
    if have is None or "*" in have:
        return pythons
    return tuple(p for p in pythons if p in have)
