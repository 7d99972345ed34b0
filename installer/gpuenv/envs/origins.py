"""The lockfile-origin rule: where a lockfile's files may come from, decided by the installing
user's own configuration, never by the lockfile (it arrives through shared repositories, and
verify and the smoke test import what was installed).

A pip entry is accepted when its URL is
- portable, `index:///<project>/<file>`: install looks it up on the user's own indexes;
- under one of the user's locations (gpuenv.index.origin.is_under): pip's and uv's configured
  indexes and find-links locations (and `--index` on the command line);
- under an index the knowledge base names for a framework build (the PyTorch index's per-CUDA
  folders, the JAX CUDA releases page's folder);
- or listed, by that very URL, on the project's page of one of those indexes: the user's
  default index's files live on another host than its pages (a lockfile gpuenv writes for this
  machine names them directly), and a local `file://` index lists files outside its own folder.
  Where the page gives that file another sha256 than the lockfile's, the install stops there
  (HashMismatchError, exit 1): the right origin, the wrong bytes.

A conda entry is accepted when its URL is under one of the trusted channels: gpuenv's default
(conda-forge), the channels the user lists in GPUENV_CHANNELS (space- or comma-separated), and
those named with `--channel`. The channels a lockfile records in its own metadata grant
nothing: they are the lockfile's word.

With `--from DIR` no URL is used at all (every file comes from the wheelhouse the user passes),
and `--allow-any-origin` turns the rule off. Anything else is refused before anything is
downloaded or changed (UntrustedOriginError, exit 2), naming each entry and its origin, with
credentials and query values redacted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from gpuenv.index.config import IndexConfig, default_index_url, uv_sources
from gpuenv.index.origin import same_url, under_any, url_parts
from gpuenv.lock.conda import DEFAULT_CHANNELS, channel_url
from gpuenv.lock.errors import SourceUnreachableError, UntrustedOriginError
from gpuenv.lock.model import PORTABLE_PREFIX, LockedEnvironment
from gpuenv.output.redact import redact_url

CHANNELS_ENV = "GPUENV_CHANNELS"  # the user's trusted conda channels, beside conda-forge
MAX_SHOWN = 8  # entries named in one refusal; the rest are counted
PAGE_WORKERS = 8  # index pages read at once


class Origins:
    """What the installing user trusts: locations (URL prefixes) for wheels, indexes whose
    pages may list a wheel by its URL, and conda channels. The knowledge base and uv's default
    index are looked up only when an entry needs them."""

    def __init__(
        self,
        user_indexes: tuple[str, ...] = (),
        user_links: tuple[str, ...] = (),
        channels: tuple[str, ...] = (),
        *,
        ask_default: bool = False,
        knowledge_base: bool = True,
    ) -> None:
        self.user_indexes = user_indexes
        self.user_links = user_links
        self.channels = channels
        self._ask_default = ask_default  # uv's own default index is one of the user's
        self._knowledge_base = knowledge_base

    @cached_property
    def framework_indexes(self) -> tuple[str, ...]:
        return _framework_indexes() if self._knowledge_base else ()

    @cached_property
    def default_index(self) -> tuple[str, ...]:
        return (default_index_url(),) if self._ask_default else ()

    def location_of(self, url: str) -> Optional[str]:
        """The trusted location `url` is under, or None (no index page read)."""
        found = under_any(url, self.user_indexes + self.user_links)
        if found is None:
            found = under_any(url, self.framework_indexes)
        if found is None and self._ask_default:
            found = under_any(url, self.default_index)
        return found

    def listing_indexes(self) -> list[tuple[str, bool]]:
        """The indexes asked whether they list a file, in order, each with whether it may
        vouch for a file on another host: the user's may (the default index's files live on
        another host than its pages), a framework index only for files on its own host."""
        user = [*self.user_indexes, *self.default_index]
        framework = [i for i in self.framework_indexes if i not in user]
        return [(i, True) for i in dict.fromkeys(user)] + [(i, False) for i in framework]


@dataclass(frozen=True)
class _Entry:
    kind: str  # pip | conda
    name: str
    version: str
    url: str
    sha256: str

    def shown(self) -> str:
        from gpuenv.output import shown

        return shown(f"{self.kind} package {self.name} {self.version} from {redact_url(self.url)}")


def user_origins(indexes: IndexConfig, *, channels: Iterable[str] = ()) -> Origins:
    """The installing user's configuration as Origins: pip's settings and the command line's
    `--index` (as `indexes` holds them), uv's own settings, GPUENV_CHANNELS and the command
    line's `channels`, gpuenv's default channel, and the knowledge base's framework indexes. A
    location gpuenv cannot read is refused (IndexConfigError, exit 2)."""
    from gpuenv.lock.portability import configured_sources

    sources = configured_sources(indexes)
    uv = uv_sources()
    configured = os.environ.get(CHANNELS_ENV, "").replace(",", " ").split()
    return Origins(
        user_indexes=sources.indexes,
        user_links=sources.find_links,
        channels=tuple(
            dict.fromkeys(
                channel_url(c) for c in (*DEFAULT_CHANNELS, *configured, *channels) if c.strip()
            )
        ),
        ask_default=not (indexes.index_url or uv.default_index or indexes.no_index),
    )


def _framework_indexes() -> tuple[str, ...]:
    """Every index a framework build of the knowledge base names (trusted: recipes/)."""
    from gpuenv.recipes import load_knowledge_base

    kb = load_knowledge_base()
    found = [
        build.index
        for framework in kb.frameworks.values()
        for release in framework.releases
        for build in release.builds
        if build.index
    ]
    return tuple(dict.fromkeys(found))


def check_origins(locked: LockedEnvironment, origins: Origins) -> None:
    """Refuse (UntrustedOriginError) a lockfile with an entry from anywhere `origins` does not
    cover, before anything is downloaded; index pages are read only for the entries no
    location covers."""
    refused: list[_Entry] = []
    unverified: list[_Entry] = []
    for record in locked.conda:
        entry = _Entry(
            "conda",
            str(record["name"]),
            str(record["version"]),
            str(record["url"]),
            str(record.get("sha256")),
        )
        if under_any(entry.url, origins.channels) is None:
            refused.append(entry)
    for pip in locked.pip:
        if pip.url.startswith(PORTABLE_PREFIX):
            continue  # looked up on the user's own indexes at install
        entry = _Entry("pip", pip.name, pip.version, pip.url, pip.sha256)
        if url_parts(entry.url) is None:
            refused.append(entry)  # a way round (a dot segment, an encoded slash): no page lists it
        elif origins.location_of(entry.url) is None:
            unverified.append(entry)
    unreachable: dict[str, str] = {}
    if unverified:
        listed, unreachable = _listed(unverified, origins.listing_indexes())
        refused += [e for e in unverified if e not in listed]
    if not refused:
        return
    if unreachable and any(e.kind == "pip" for e in refused):
        failed = "; ".join(f"{redact_url(i)} ({why})" for i, why in unreachable.items())
        raise SourceUnreachableError(
            f"{locked.path}: cannot tell whether {_names(refused)} come from your indexes:"
            f" {failed}. Nothing was downloaded or changed."
        )
    raise UntrustedOriginError(_refusal(locked, refused, origins))


def _names(entries: list[_Entry]) -> str:
    names = [f"{e.name} {e.version}" for e in entries[:MAX_SHOWN]]
    more = f" and {len(entries) - MAX_SHOWN} more" if len(entries) > MAX_SHOWN else ""
    return ", ".join(names) + more


def _refusal(locked: LockedEnvironment, refused: list[_Entry], origins: Origins) -> str:
    shown = "; ".join(e.shown() for e in refused[:MAX_SHOWN])
    if len(refused) > MAX_SHOWN:
        shown += f"; and {len(refused) - MAX_SHOWN} more"
    conda = any(e.kind == "conda" for e in refused)
    pip = any(e.kind == "pip" for e in refused)
    fixes = []
    if pip:
        fixes.append(
            "configure that index or find-links folder (pip.conf, PIP_INDEX_URL,"
            " PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, uv.toml, UV_INDEX; or --index URL)"
        )
    if conda:
        channels = ", ".join(redact_url(c) for c in origins.channels)
        fixes.append(
            f"name that conda channel with --channel or in GPUENV_CHANNELS (trusted now: {channels})"
        )
    fixes.append("install from a wheelhouse you filled (--from DIR)")
    fixes.append("or pass --allow-any-origin if you trust this lockfile's every URL")
    return (
        f"{locked.path} names files from origins you did not configure: {shown}. A lockfile's"
        " packages come only from your configured indexes and find-links locations, the"
        " framework indexes gpuenv knows, or a wheelhouse you pass; nothing was downloaded or"
        f" changed. To install it: {'; '.join(fixes)}."
    )


def _listed(
    entries: list[_Entry], indexes: list[tuple[str, bool]]
) -> tuple[list[_Entry], dict[str, str]]:
    """The entries one of `indexes` lists by their very URL (and sha256, where its page gives
    one), asking the indexes in order (see Origins.listing_indexes); and the indexes that could
    not be read (why)."""
    from gpuenv.index.simple import project_listing

    found: list[_Entry] = []
    unreachable: dict[str, str] = {}
    left = list(entries)
    for index, any_host in indexes:
        if not left:
            break
        projects = sorted({e.name for e in left if _could_list(index, e.url, any_host)})
        if not projects:
            continue

        def page(project: str, index: str = index) -> tuple[str, object]:
            try:
                return project, project_listing(index, project)
            except FileNotFoundError:
                return project, {}
            except Exception as exc:  # an index that cannot be read: said if it mattered
                return project, exc

        with ThreadPoolExecutor(max_workers=min(PAGE_WORKERS, len(projects))) as pool:
            pages = dict(pool.map(page, projects))
        still = []
        for entry in left:
            listing = pages.get(entry.name) if _could_list(index, entry.url, any_host) else {}
            if isinstance(listing, Exception):
                unreachable.setdefault(index, type(listing).__name__)
                still.append(entry)
            elif isinstance(listing, dict) and _lists(listing, entry, index):
                found.append(entry)
            else:
                still.append(entry)
        left = still
    return found, unreachable


def _could_list(index: str, url: str, any_host: bool) -> bool:
    """A local index lists local files, a remote one remote files (a remote page naming a
    file:// URL would be a way to read any file of this machine); a framework index only files
    on its own host."""
    page, target = url_parts(index), url_parts(url)
    if page is None or target is None or (page.scheme == "file") != (target.scheme == "file"):
        return False
    return any_host or page.origin == target.origin


def _lists(listing: dict[str, tuple[str, Optional[str]]], entry: _Entry, index: str) -> bool:
    """Whether the page lists the entry's very URL. Listed with another sha256 than the
    lockfile's, it is the right origin and the wrong bytes: HashMismatchError (exit 1) now,
    before anything is downloaded."""
    for url, sha256 in listing.values():
        if same_url(url, entry.url):
            if sha256 is not None and sha256 != entry.sha256:
                from gpuenv.envs.errors import HashMismatchError

                raise HashMismatchError(
                    f"{entry.name} {entry.version}: {redact_url(index)} publishes"
                    f" {redact_url(entry.url)} with sha256 {sha256}, which does not match the"
                    f" lockfile's {entry.sha256}; the lockfile was altered, or the index"
                    " replaced the file. Nothing was downloaded or changed."
                )
            return True
    return False
