"""`gpuenv recipes check --online`: the knowledge base against what the index publishes.

Reads the configured index's simple API (PEP 691 JSON, PEP 503 HTML as a fallback) and compares
release lists and, per platform, the Python versions that have wheels. A final release newer
than the knowledge base's newest is an error (plans cannot use it until it is recorded) marked
as upstream news: what the index publishes beyond the knowledge base is the maintenance check's
to report, while the test suite fails only on rows the index contradicts. Where
builds come from their own index (the PyTorch index's cu126, cu128, ... folders) and it answers,
the builds per release, variant and platform are compared too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Optional

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuenv.index.simple import fetch_filenames
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.recipes.check import Finding
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import PLATFORM_PROJECT, Build, Framework, Release


def _wheels(filenames: Iterable[str]) -> Iterator[tuple[Version, frozenset[Tag]]]:
    """(version, tags) of each wheel among an index's file names; other files, and names that
    are not valid wheel names, are passed over."""
    for name in filenames:
        if not name.endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        yield version, tags


def wheel_pythons(filenames: Iterable[str]) -> dict[Version, dict[str, set[str]]]:
    """version -> platform -> {"3.11", ...} from wheel file names. Free-threaded builds and
    Python 2 wheels (cp27: TensorFlow 1.15.0-2.1.0) are left out: the knowledge base records
    Python 3 only."""
    out: dict[Version, dict[str, set[str]]] = {}
    for version, tags in _wheels(filenames):
        for tag in tags:
            if not tag.interpreter.startswith("cp") or tag.abi.endswith("t"):
                continue
            digits = tag.interpreter[2:]
            if not digits.startswith("3") or len(digits) < 2:
                continue
            py = f"{digits[0]}.{digits[1:]}"
            for platform in platform_of(tag.platform):
                out.setdefault(version, {}).setdefault(platform, set()).add(py)
    return out


def compare(kb: KnowledgeBase, index_url: str, fetch: Optional[object] = None) -> list[Finding]:
    getter = fetch or fetch_filenames
    findings = _compare_default_index(kb, index_url, getter)
    for fw in kb.frameworks.values():
        findings += compare_variants(fw, getter)
    return findings


def _compare_default_index(kb: KnowledgeBase, index_url: str, getter: object) -> list[Finding]:
    findings: list[Finding] = []
    for fw in kb.frameworks.values():
        project = fw.name
        platform_project = PLATFORM_PROJECT.get(project, project)
        try:
            files = getter(index_url, project)  # type: ignore[operator]
            platform_files = (
                files if platform_project == project else getter(index_url, platform_project)  # type: ignore[operator]
            )
        except Exception as exc:
            findings.append(
                Finding("error", f"{fw.file}", f"could not read {project} from {index_url}: {exc}")
            )
            continue
        findings += _compare_framework(
            fw.file,
            project,
            fw.releases,
            _versions(files),
            platform_project,
            wheel_pythons(platform_files),
        )
    return findings


def _versions(filenames: Iterable[str]) -> set[Version]:
    out = set()
    for name in filenames:
        if name.endswith(".whl"):
            try:
                out.add(parse_wheel_filename(name)[1])
            except (InvalidWheelFilename, InvalidVersion):
                continue
    return out


def _compare_framework(
    file: str,
    project: str,
    releases: Sequence[Release],
    versions: set[Version],
    platform_project: str,
    published: dict[Version, dict[str, set[str]]],
) -> list[Finding]:
    out: list[Finding] = []
    known = {Version(r.version) for r in releases}
    newest_known = max(known) if known else None
    for version in sorted(versions, reverse=True):
        if (
            newest_known
            and version > newest_known
            and not version.local
            and not version.is_prerelease
        ):
            out.append(
                Finding(
                    "error",
                    file,
                    f"{project} {version} is on the index but not in the knowledge base (newest"
                    f" recorded: {newest_known}); plans cannot use it until it is recorded"
                    f" (`gpuenv recipes draft {project} {version}` drafts its rows)",
                    upstream=True,
                    draft=(project, str(version)),
                )
            )
        elif (
            newest_known
            and min(known) < version < newest_known
            and version not in known
            and not version.local
            and not version.is_prerelease
        ):
            out.append(
                Finding(
                    "warning",
                    file,
                    f"{project} {version} is on the index but not in the knowledge base",
                    upstream=True,
                )
            )
    for rel in releases:
        if (rel.package or project) != project:
            continue
        if Version(rel.version) not in versions:
            out.append(
                Finding(
                    "warning",
                    f"{file} {rel.version}",
                    f"no {project} {rel.version} wheels on the index",
                )
            )
            continue
        platform_version = rel.related.get(platform_project, rel.version)
        on_index = published.get(Version(platform_version), {})
        for platform in sorted(_default_index_platforms(rel)):
            ours = set(rel.python.get(platform, ()))
            theirs = on_index.get(platform, set())
            if theirs and ours != theirs:
                out.append(
                    Finding(
                        "error",
                        f"{file} {rel.version} python.{platform}",
                        f"knowledge base says {sorted(ours)}, the index has {platform_project}"
                        f" {platform_version} wheels for {sorted(theirs)}",
                        # wheels for a new Python added to an old release: news, not a wrong row
                        upstream=ours < theirs,
                    )
                )
    return out


def _default_index_platforms(rel: Release) -> set[str]:
    """Platforms whose default-index wheels are one of this release's builds."""
    out: set[str] = set()
    for build in rel.builds:
        if build.package and build.package != (rel.package or rel.framework):
            continue
        if build.index is None:
            out.update(build.platforms)
        out.update(build.pypi_default)
    return out


def compare_variants(fw: Framework, getter: object) -> list[Finding]:
    """Builds per release, variant and platform against the indexes that publish them (the
    PyTorch index's per-CUDA folders; for jax, the JAX CUDA index's labelled jaxlib wheels).
    An unreachable index is a warning: nothing compared."""
    # jax's labelled files are jaxlib's (jaxlib 0.4.18+cuda12.cudnn89), under jaxlib's version
    project = PLATFORM_PROJECT.get(fw.name, fw.name)

    def files_version(rel: Release) -> Version:
        return Version(rel.related.get(project, rel.version))

    by_index: dict[str, list[tuple[Release, Build]]] = {}
    for rel in fw.releases:
        for build in rel.builds:
            package = build.package or rel.package or fw.name
            if build.index and build.local and package == fw.name:
                by_index.setdefault(build.index, []).append((rel, build))
    out: list[Finding] = []
    known = {files_version(r): r for r in fw.releases}
    for index, rows in sorted(by_index.items()):
        try:
            files = getter(index, project)  # type: ignore[operator]
        except Exception as exc:
            out.append(
                Finding(
                    "warning",
                    fw.file,
                    f"could not read {project} from {index} ({type(exc).__name__}); its"
                    " builds were not compared",
                )
            )
            continue
        published = _published_builds(files)
        recorded = {
            (files_version(rel), build.local, platform): rel
            for rel, build in rows
            for platform in build.platforms
        }
        locals_here = {build.local for _, build in rows}
        for (version, local, platform), rel in sorted(recorded.items(), key=str):
            if (version, local, platform) not in published:
                out.append(
                    Finding(
                        "error",
                        f"{fw.file} {rel.version} [{local.lstrip('+')}]",
                        f"recorded for {platform}, but {index} has no {project}"
                        f" {version}{local} wheel for it",
                    )
                )
        for version, local, platform in sorted(published, key=str):
            release = known.get(version)
            if release is None or local not in locals_here:
                continue
            if (version, local, platform) in recorded:
                continue
            level = "error" if release.builds_complete else "warning"
            why = "" if release.builds_complete else " (marked builds_complete = false)"
            out.append(
                Finding(
                    level,
                    f"{fw.file} {release.version} [{local.lstrip('+')}]",
                    f"{index} has {project} {version}{local} for {platform}; the knowledge base"
                    f" records no such build{why}",
                    upstream=True,
                )
            )
    return out


def _published_builds(filenames: Iterable[str]) -> set[tuple[Version, str, str]]:
    """(public version, "+local", platform) of every wheel on a per-variant index."""
    out: set[tuple[Version, str, str]] = set()
    for version, tags in _wheels(filenames):
        if not version.local:
            continue
        public = Version(version.public)
        for tag in tags:
            for platform in platform_of(tag.platform):
                out.add((public, f"+{version.local}", platform))
    return out
