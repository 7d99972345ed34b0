"""What the reachable sources publish of each framework, so resolve only picks what can be had.

Sources: the index of every build the knowledge base records for the target platform, the
user's configured indexes, and their find-links folders. A source that does not answer becomes
a note ("https://download.pytorch.org/whl/cu118: unreachable (...)") and the plan falls back to
what the others have.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpuenv.indexes import IndexConfig, default_index_url
from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes_online import fetch_filenames, platform_of
from gpuenv.resolve.rules import build_package
from gpuenv.resolve.target import Availability

PROBE_TIMEOUT = 15.0


def framework_packages(
    kb: KnowledgeBase, frameworks: Iterable[str], platform: str
) -> dict[str, set[str]]:
    """package -> the indexes (besides the user's) that publish it for the platform."""
    out: dict[str, set[str]] = {}
    for name in frameworks:
        for release in kb.framework(name).releases:
            for build in release.builds:
                if platform not in build.platforms:
                    continue
                indexes = out.setdefault(build_package(release, build), set())
                if build.index and platform not in build.pypi_default:
                    indexes.add(build.index)
    return out


def gather(
    kb: KnowledgeBase, frameworks: Iterable[str], platform: str, config: IndexConfig
) -> Availability:
    packages = framework_packages(kb, frameworks, platform)
    user_indexes = [config.index_url or default_index_url(), *config.extra_index_urls]
    jobs = [
        (pkg, idx)
        for pkg, extra in sorted(packages.items())
        for idx in [*user_indexes, *sorted(extra)]
    ]
    versions: dict[str, dict[str, list[str]]] = {pkg: {} for pkg in packages}
    unreachable: dict[str, str] = {}

    def probe(job: tuple[str, str]) -> tuple[str, str, list[str] | Exception]:
        pkg, index = job
        try:
            return pkg, index, fetch_filenames(index, pkg, timeout=PROBE_TIMEOUT)
        except Exception as exc:  # every failure is a note, never a crash
            return pkg, index, exc

    with ThreadPoolExecutor(max_workers=8) as pool:
        for pkg, index, result in pool.map(probe, jobs):
            if isinstance(result, Exception):
                if not _is_missing_project(result):
                    unreachable[index] = (
                        f"{index}: unreachable ({type(result).__name__}: {str(result)[:160]})"
                    )
                continue
            _add(versions[pkg], result, platform, index)
    for link in config.find_links:
        folder = link[len("file://") :] if link.startswith("file://") else link
        if os.path.isdir(folder):
            files = os.listdir(folder)
            for pkg in packages:
                _add(
                    versions[pkg],
                    [f for f in files if _project_of(f) == pkg],
                    platform,
                    Path(folder).as_uri(),
                )
    return Availability(
        versions={pkg: {v: tuple(s) for v, s in found.items()} for pkg, found in versions.items()},
        unreachable=tuple(sorted(unreachable.values())),
    )


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


def _add(found: dict[str, list[str]], filenames: Iterable[str], platform: str, source: str) -> None:
    for name in filenames:
        name = unquote(name)
        if not name.endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, ValueError):
            continue
        if any(platform in platform_of(t.platform) or t.platform == "any" for t in tags):
            sources = found.setdefault(str(version), [])
            if source not in sources:
                sources.append(source)
