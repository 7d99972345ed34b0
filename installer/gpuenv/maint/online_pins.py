"""`gpuenv recipes check --online`: every build's recorded NVIDIA wheel pins (`pip_libs`) against
the METADATA of its wheel on the default index, where the wheel is there.

The pins decide which frameworks may share one environment (gpuenv.resolve.combine), so a
row that drifted from its wheel is an error. The METADATA is read as the index serves it
(PEP 658's `.metadata` file, else the wheel's own member by range requests); only its nvidia-*
requirements are compared, markers left out as the rows record them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from gpuenv.recipes.check import Finding
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import Build, Release, canonical_name

# (index, project) -> {file name: URL}; url -> bytes or None (absent)
Lister = Callable[[str, str], dict[str, str]]
Getter = Callable[[str], Optional[bytes]]


def _sources(release: Release, build: Build) -> list[tuple[str, str, Optional[str]]]:
    """(project, version, extra) whose METADATA declares this build's NVIDIA wheels, most
    specific first. jax's CUDA plugin carries jaxlib's version (jax 0.5.2 runs jaxlib 0.5.1)."""
    if release.framework == "jax":
        plugin = f"jax-{build.variant}-plugin"
        jaxlib = release.related.get("jaxlib", release.version)
        return [(plugin, jaxlib, "with-cuda"), ("jax", release.version, build.extra)]
    project = build.package or release.package or release.framework
    return [(project, release.version, build.extra)]


def _checked_builds(kb: KnowledgeBase) -> Iterator[tuple[str, Release, Build]]:
    """Linux builds whose pins come from their own wheel on the default index."""
    for framework in kb.frameworks.values():
        for release in framework.releases:
            for build in release.builds:
                on_default = "linux-64" in build.pypi_default or (
                    build.index is None and "linux-64" in build.platforms
                )
                if build.pip_libs and build.pip_libs_declared and on_default:
                    yield framework.file, release, build


def pin_findings(
    kb: KnowledgeBase, index_url: str, listing: Lister, getter: Getter
) -> list[Finding]:
    """One error per build whose pins differ from its wheel's; a warning per wheel unread."""
    jobs = list(_checked_builds(kb))

    def one(job: tuple[str, Release, Build]) -> Optional[Finding]:
        file, release, build = job
        where = f"{file} {release.version} [{build.variant}] pip_libs"
        try:
            found = _published(release, build, index_url, listing, getter)
        except Exception as exc:  # the network, a broken page: not compared, and said
            return Finding("warning", where, f"not compared: {type(exc).__name__}: {exc}")
        if found is None:
            return None  # no linux-64 wheel of it there: nothing to compare
        wheel, published = found
        recorded = _nvidia(build.pip_libs)
        if recorded == published:
            return None
        return Finding(
            "error", where, f"differ from {wheel}'s METADATA: {_diff(recorded, published)}"
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        return [f for f in pool.map(one, jobs) if f is not None]


def _published(
    release: Release, build: Build, index_url: str, listing: Lister, getter: Getter
) -> Optional[tuple[str, dict[str, str]]]:
    from packaging.version import Version

    first: Optional[tuple[str, dict[str, str]]] = None
    for project, version, extra in _sources(release, build):
        try:
            files = listing(index_url, project)
        except FileNotFoundError:
            continue
        wheel = _linux_wheel(files, Version(version))
        if wheel is None:
            continue
        name, url = wheel
        metadata = getter(url + ".metadata")
        if metadata is None:
            from gpuenv.index.remote_wheel import read_member

            dist, version = name.split("-")[:2]
            metadata = read_member(url, f"{dist}-{version}.dist-info/METADATA")
        if metadata is None:
            continue
        declared = _nvidia(_requirements(metadata, extra))
        if declared:  # jax before 0.4.30 declares them in its own extra, not the plugin's
            return name, declared
        first = first or (name, declared)
    return first


def _linux_wheel(files: dict[str, str], version: object) -> Optional[tuple[str, str]]:
    """A wheel of `version` that installs on Linux x86_64 (a pure one counts)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion

    for name, url in sorted(files.items()):
        if not name.endswith(".whl"):
            continue
        try:
            _, found, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if found == version and any(
            t.platform == "any" or (t.platform.endswith("x86_64") and "linux" in t.platform)
            for t in tags
        ):
            return name, url
    return None


def _requirements(metadata: bytes, extra: Optional[str]) -> list[str]:
    """The requirements a wheel declares on Linux x86_64, with `extra` asked for."""
    from email.parser import HeaderParser

    from packaging.requirements import InvalidRequirement, Requirement

    where = {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "extra": canonical_name(extra) if extra else "",
    }
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    out = []
    for line in message.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate(where):
            out.append(f"{req.name}{req.specifier}")
    return out


def _nvidia(requirements: tuple[str, ...] | list[str]) -> dict[str, str]:
    """nvidia-* name -> its specifier (normalised), markers and other requirements left out."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = {}
    for text in requirements:
        try:
            req = Requirement(text.split(";", 1)[0])
        except InvalidRequirement:
            continue
        name = canonical_name(req.name)
        if name.startswith("nvidia-"):
            out[name] = str(req.specifier)
    return out


def _diff(recorded: dict[str, str], published: dict[str, str]) -> str:
    parts = []
    for name in sorted(set(recorded) | set(published)):
        a, b = recorded.get(name), published.get(name)
        if a == b:
            continue
        if a is None:
            parts.append(f"{name}{b} not recorded")
        elif b is None:
            parts.append(f"{name}{a} recorded, not declared")
        else:
            parts.append(f"{name}: recorded {a or '(any)'}, declared {b or '(any)'}")
    return "; ".join(parts)
