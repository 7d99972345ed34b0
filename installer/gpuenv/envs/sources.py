"""Where a lockfile's wheel URLs point on this machine: a portable `index:///<project>/<file>`
resolved on the user's configured indexes (pip's and uv's settings, find-links folders), and a
`file://` wheel that must be there. gpuenv.envs.artifacts gathers the files; uv checks each
against the lockfile's sha256."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional
from urllib.parse import unquote, urlsplit

from gpuenv.envs.errors import InstallError
from gpuenv.index.config import IndexConfig, default_index_url, uv_sources
from gpuenv.index.origin import has_credentials, with_credentials
from gpuenv.index.simple import project_files
from gpuenv.lock.model import PORTABLE_PREFIX
from gpuenv.output.redact import redact_url

if TYPE_CHECKING:
    from gpuenv.envs.artifacts import Artifact


def file_url_path(url: str) -> Path:
    path = unquote(urlsplit(url).path)
    return Path(path.lstrip("/") if sys.platform == "win32" else path)


class PortableResolver:
    """index:///<project>/<file> -> that file's URL on the user's configured indexes.

    Where the user configured them: pip's settings (or the caller's IndexConfig) and uv's own
    (its variables and uv.toml, read only once a portable entry needs them), so a mirror set up
    for either tool is found. Any index may serve the file: uv checks it against the lockfile's
    sha256.
    """

    def __init__(self, indexes: IndexConfig) -> None:
        self.indexes = indexes
        self._pages: dict[tuple[str, str], dict[str, str]] = {}
        self._where: Optional[tuple[list[str], list[str]]] = None
        self._credentialed: Optional[list[str]] = None

    def url(self, art: Artifact) -> str:
        if not art.url.startswith(PORTABLE_PREFIX):
            if art.kind == "pip" and art.url.startswith("file://"):
                _local_wheel(art)
            return art.url
        project = art.url[len(PORTABLE_PREFIX) :].split("/", 1)[0]
        indexes, links = self._locations()
        for link in links:
            if urlsplit(link).scheme != "file":
                continue  # a find-links page: its files are on an index too, or not portable
            candidate = file_url_path(link) / art.filename
            if candidate.is_file():
                return candidate.as_uri()
        tried = []
        for index in indexes:
            key = (index, project)
            if key not in self._pages:
                try:
                    self._pages[key] = project_files(index, project)
                except FileNotFoundError:
                    self._pages[key] = {}
                except Exception as exc:
                    tried.append(f"{redact_url(index)} ({type(exc).__name__})")
                    continue
            if art.filename in self._pages[key]:
                return self._pages[key][art.filename]
            tried.append(redact_url(index))  # shown in the error: no password
        raise InstallError(
            f"{art.filename} (from a portable lockfile) is on none of the configured indexes:"
            f" {', '.join(tried)}"
        )

    def with_credentials(self, url: str) -> str:
        """`url` with the credentials of a configured index or find-links location of the same
        scheme, host and port (pip's and uv's realm rule), for gpuenv's own download of it."""
        if self._credentialed is None:
            uv = uv_sources()
            config = self.indexes
            every = [
                *config.all_indexes(),
                *config.find_links,
                *uv.indexes,
                *((uv.default_index,) if uv.default_index else ()),
                *uv.find_links,
            ]
            self._credentialed = [u for u in every if has_credentials(u)]
        return with_credentials(url, self._credentialed)

    def _locations(self) -> tuple[list[str], list[str]]:
        """The indexes, in order, and the find-links locations to look in (as URLs)."""
        if self._where is None:
            uv = uv_sources()
            config = self.indexes
            indexes = [*config.all_indexes(), *uv.indexes]
            if not config.index_url:
                indexes.append(uv.default_index or default_index_url())
            links = [
                link if "://" in link else Path(os.path.abspath(link)).as_uri()
                for link in config.find_links
            ]
            self._where = list(dict.fromkeys(indexes)), [*links, *uv.find_links]
        return self._where


def _local_wheel(art: Artifact) -> None:
    """A wheel the lockfile names by a local path (locked from a find-links folder or a local
    index: see gpuenv.not_portable in the lockfile) must be there on this machine too."""
    path = file_url_path(art.url)
    if not os.path.lexists(path):
        raise InstallError(
            f"cannot read {path}: no such file here. The lockfile names {art.filename} by a"
            " path on the machine that locked it; copy the wheel there (the lockfile's sha256"
            " is checked), or lock again from an index that publishes it."
        )
