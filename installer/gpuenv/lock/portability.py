"""Which locked wheels another machine can find on its own index (`lock --portable`).

A portable entry (`index:///<project>/<file>`) names a file by project and name only; install
looks it up on the installing machine's indexes. That holds only for a file an index
publishes. A wheel uv took from a find-links folder (a `+cpu` wheelhouse such as /opt/wheels),
or any other local file, is on no index: written as portable, the lockfile would install here
and nowhere else. Such a wheel keeps its own URL (with its sha256), and the lock says so in its
output and in the lockfile's `gpuenv.not_portable` (see docs/stages.md, "Portable lockfiles").

uv's pylock.toml (`uv pip compile --format pylock.toml`) records no source per package, so the
source is told from the wheel's URL and the locations the user configured: pip's (passed to
uv) and uv's own (its variables and uv.toml, gpuenv.index.config.uv_sources).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote, urlsplit

from gpuenv.index.config import IndexConfig, checked_location, uv_sources
from gpuenv.lock.pypi import PipArtifact


@dataclass(frozen=True)
class Sources:
    """Every index and find-links location the lock's uv read, as URLs."""

    indexes: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()


def configured_sources(indexes: IndexConfig, environ: Optional[dict[str, str]] = None) -> Sources:
    """pip's locations (as gpuenv passes them to uv) and uv's own; a location gpuenv cannot
    read is refused here (IndexConfigError), before uv runs."""
    uv = uv_sources(environ)
    own = [checked_location(u, f"index {u}") for u in indexes.all_indexes()]
    links = [checked_location(_absolute(u), f"find-links location {u}") for u in indexes.find_links]
    default = (uv.default_index,) if uv.default_index else ()
    return Sources(
        tuple(dict.fromkeys([*own, *uv.indexes, *default])),
        tuple(dict.fromkeys([*links, *uv.find_links])),
    )


def _absolute(location: str) -> str:
    """pip's relative find-links folders are relative to the working folder, as uv reads them."""
    return location if "://" in location else os.path.abspath(location)


def not_portable(artifacts: list[PipArtifact], sources: Sources) -> dict[str, str]:
    """project -> why its wheel cannot be written as portable, for each such wheel."""
    out = {}
    for art in artifacts:
        why = _why_local(art, sources)
        if why:
            out[art.name] = why
    return out


def not_portable_notes(artifacts: list[PipArtifact], local: dict[str, str]) -> list[str]:
    """One line for people per wheel kept by its own URL in a portable lockfile."""
    return [
        f"not portable: {a.name} {a.version} is {local[a.name]}; the lockfile names it by that"
        " path (with its sha256), so a machine installing it needs the same file there"
        " (recorded as gpuenv.not_portable in the lockfile)"
        for a in artifacts
        if a.name in local
    ]


def _why_local(art: PipArtifact, sources: Sources) -> Optional[str]:
    link = _find_links_holding(art.url, sources.find_links)
    if link is not None:
        return link
    if urlsplit(art.url).scheme != "file":
        return None  # an http(s) file from an index: the user's, or the framework's own
    if art.index is None and _on_local_index(art, sources.indexes):
        return None
    return f"a local file ({_path(art.url)}) on no index"


def _find_links_holding(url: str, links: tuple[str, ...]) -> Optional[str]:
    """`only in the find-links folder X` when the wheel lies in one of the locations."""
    local = urlsplit(url).scheme == "file"
    folder = os.path.realpath(os.path.dirname(_path(url))) if local else None
    for link in links:
        if urlsplit(link).scheme == "file":
            where = _path(link)
            # a folder given through a link is the folder it leads to: say both
            real = os.path.realpath(where)
            if folder is not None and real == folder:
                via = f" (a link to {real})" if real != os.path.abspath(where) else ""
                return f"only in the find-links folder {where}{via}"
        else:
            # a page (index.html, jax_releases.html) links files beside it; a folder, inside it
            base = (
                link.rsplit("/", 1)[0] + "/" if link.endswith(".html") else link.rstrip("/") + "/"
            )
            if url.startswith(base):
                return f"only on the find-links page {link}"
    return None


def refuse_foreign_files(artifacts: list[PipArtifact], indexes: IndexConfig) -> None:
    """LockError unless every `file://` wheel in uv's answer lies in a find-links folder or on
    a `file://` index gpuenv passed (or uv's own configuration names), or on the framework
    index the plan routed it to: anything else is a file of this machine that nothing the user
    configured offered (a planted project or configuration steering uv)."""
    from gpuenv.index.origin import under_any
    from gpuenv.lock.errors import LockError

    local = [a for a in artifacts if urlsplit(a.url).scheme.lower() == "file"]
    if not local:
        return
    sources = configured_sources(indexes)
    file_indexes = tuple(i for i in sources.indexes if urlsplit(i).scheme == "file")
    foreign = []
    for art in local:
        allowed = (*sources.find_links, *file_indexes, *((art.index,) if art.index else ()))
        listed_by = (*file_indexes, *((art.index,) if art.index else ()))
        if under_any(art.url, allowed) is None and not _on_local_index(art, listed_by):
            foreign.append(art)
    if foreign:
        shown = "; ".join(f"{a.name} {a.version} from {_path(a.url)}" for a in foreign)
        raise LockError(
            f"uv's answer names local files that none of your find-links folders or file://"
            f" indexes offered: {shown}. gpuenv writes no such lockfile; check for a uv"
            " configuration or project that gpuenv did not pass (UV_* variables, uv.toml)."
        )


def _on_local_index(art: PipArtifact, indexes: tuple[str, ...]) -> bool:
    """Whether a local (file://) index lists this very file under its project."""
    from gpuenv.index.simple import project_files

    here = os.path.realpath(_path(art.url))
    for index in indexes:
        if urlsplit(index).scheme != "file":
            continue
        try:
            files = project_files(index, art.name)
        except (FileNotFoundError, ValueError, OSError):
            continue
        listed = files.get(art.filename)
        if listed and os.path.realpath(_path(listed)) == here:
            return True
    return False


def _path(file_url: str) -> str:
    path = unquote(urlsplit(file_url).path)
    return path.lstrip("/") if sys.platform == "win32" else path


def this_machine_only(
    artifacts: list[PipArtifact], sources: Sources, *, by_url: bool
) -> dict[str, str]:
    """project -> where this machine has it, for each wheel another machine cannot fetch.
    `by_url`: the format names every wheel by its URL (pylock.toml), so any local file is
    this machine's; otherwise (portable conda-lock) a file a local index lists is found on the
    installing machine's own index, and only those no index publishes are this machine's."""
    if not by_url:
        return not_portable(artifacts, sources)
    out = {}
    for art in artifacts:
        if urlsplit(art.url).scheme != "file":
            continue
        where = _find_links_holding(art.url, sources.find_links)
        out[art.name] = where or f"in this machine's folder {os.path.dirname(_path(art.url))}"
    return out


def refuse_this_machine_only(
    artifacts: list[PipArtifact], local: dict[str, str], *, pylock: bool
) -> None:
    """LocalPathsError naming each wheel only this machine has, and how to proceed."""
    from gpuenv.lock.errors import LocalPathsError

    if not local:
        return
    shown = "; ".join(
        f"{a.name} {a.version} is {local[a.name]}" for a in artifacts if a.name in local
    )
    other = (
        " pylock.toml names every wheel by its URL: write a conda-lock file instead (--format"
        " conda-lock, whose entries are index-relative for another machine), lock against an"
        " http(s) index, or"
        if pylock
        else " Publish them on an index that machine reaches, or"
    )
    raise LocalPathsError(
        f"this lockfile is for another machine, and it would name files only this machine has:"
        f" {shown}.{other} pass --local-paths to write these paths anyway (that machine then"
        " needs the same files at the same paths)"
    )
