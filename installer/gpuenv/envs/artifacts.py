"""Getting every file a lockfile names onto this disk, each checked against its hash.

Files are kept content-addressed (`<cache>/artifacts/<sha256>/<name>`), so a second install of
the same lockfile downloads nothing; `gpuenv fetch` writes them flat into a wheelhouse instead,
which `gpuenv install --offline --from DIR` reads. Every file is hashed as it is written: a
mismatch is refused before any environment is touched. conda packages are checked here too
(py-rattler does not check `file://` packages itself).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlsplit

from gpuenv.cache import tag_cache
from gpuenv.envs.errors import HashMismatchError, InstallError
from gpuenv.indexes import IndexConfig, default_index_url
from gpuenv.lock.lockfile import PORTABLE_PREFIX, LockedEnvironment
from gpuenv.simple_index import project_files

CHUNK = 1 << 20
Progress = Callable[[str, int, Optional[int]], None]  # name, bytes so far, total


@dataclass(frozen=True)
class Artifact:
    kind: str  # pip | conda
    name: str
    filename: str
    url: str  # as the lockfile has it
    sha256: Optional[str]
    md5: Optional[str]
    record: Optional[dict[str, Any]] = None  # conda: the rattler record


@dataclass(frozen=True)
class LocalArtifact:
    artifact: Artifact
    path: Path


def artifacts_of(locked: LockedEnvironment) -> list[Artifact]:
    out = [
        Artifact(
            "conda",
            r["name"],
            r.get("file_name") or _filename(r["url"]),
            r["url"],
            r.get("sha256"),
            r.get("md5"),
            r,
        )
        for r in locked.conda
    ]
    out += [Artifact("pip", p.name, p.filename, p.url, p.sha256, None) for p in locked.pip]
    return out


def _filename(url: str) -> str:
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def gather(
    artifacts: list[Artifact],
    *,
    cache: Path,
    wheelhouse: Optional[Path] = None,
    flat: bool = False,
    indexes: Optional[IndexConfig] = None,
    progress: Optional[Progress] = None,
) -> list[LocalArtifact]:
    """Every artifact as a checked local file, or an error before anything else happens.

    With `wheelhouse`, files come only from that folder (offline). `flat` lays files out by
    name (a wheelhouse for `--from`) instead of by hash.
    """
    out = []
    if not flat:
        tag_cache(cache)
    resolver = _PortableResolver(indexes or IndexConfig())
    for art in artifacts:
        dest = cache / art.filename if flat else cache / "artifacts" / _key(art) / art.filename
        # the content-addressed cache is checked when written; a flat folder may hold anything
        if dest.is_file() and (not flat or _matches(dest, art)):
            out.append(LocalArtifact(art, dest))
            continue
        if wheelhouse is not None:
            source = wheelhouse / art.filename
            if not source.is_file():
                raise InstallError(
                    f"{art.filename} is not in {wheelhouse}; run `gpuenv fetch LOCKFILE -d"
                    f" {wheelhouse}` on a machine with network access"
                )
            _copy_checked(source.as_uri(), dest, art, progress)
        else:
            _copy_checked(resolver.url(art), dest, art, progress)
        out.append(LocalArtifact(art, dest))
    return out


def _key(art: Artifact) -> str:
    return art.sha256 or f"md5-{art.md5}"


def _matches(path: Path, art: Artifact) -> bool:
    sha, md5 = _digests(path)
    return (art.sha256 is None or sha == art.sha256) and (art.md5 is None or md5 == art.md5)


def _digests(path: Path) -> tuple[str, str]:
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            sha.update(chunk)
            md5.update(chunk)
    return sha.hexdigest(), md5.hexdigest()


def _copy_checked(url: str, dest: Path, art: Artifact, progress: Optional[Progress]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".partial-")
    tmp = Path(tmp_name)
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk, done, total in _read(url):
                out.write(chunk)
                sha.update(chunk)
                md5.update(chunk)
                if progress:
                    progress(art.filename, done, total)
        if art.sha256 and sha.hexdigest() != art.sha256:
            raise HashMismatchError(
                f"{art.filename}: sha256 {sha.hexdigest()} does not match the lockfile's"
                f" {art.sha256}; the file at {url} changed, or the lockfile was altered. Nothing"
                " was installed."
            )
        if art.md5 and md5.hexdigest() != art.md5:
            raise HashMismatchError(
                f"{art.filename}: md5 {md5.hexdigest()} does not match the lockfile's {art.md5};"
                " nothing was installed."
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _read(url: str) -> Iterator[tuple[bytes, int, Optional[int]]]:
    if url.startswith("file://"):
        path = Path(
            unquote(
                urlsplit(url).path.lstrip("/") if sys.platform == "win32" else urlsplit(url).path
            )
        )
        total = path.stat().st_size
        done = 0
        with path.open("rb") as fh:
            while chunk := fh.read(CHUNK):
                done += len(chunk)
                yield chunk, done, total
        return
    import requests

    try:
        with requests.get(url, stream=True, timeout=60) as response:
            response.raise_for_status()
            length = int(response.headers.get("Content-Length") or 0) or None
            done = 0
            for chunk in response.iter_content(CHUNK):
                done += len(chunk)
                yield chunk, done, length
    except requests.RequestException as exc:
        raise InstallError(f"could not download {url}: {exc}") from exc


class _PortableResolver:
    """index:///<project>/<file> -> that file's URL on the user's configured indexes."""

    def __init__(self, indexes: IndexConfig) -> None:
        self.indexes = indexes
        self._pages: dict[tuple[str, str], dict[str, str]] = {}

    def url(self, art: Artifact) -> str:
        if not art.url.startswith(PORTABLE_PREFIX):
            return art.url
        project = art.url[len(PORTABLE_PREFIX) :].split("/", 1)[0]
        for link in self.indexes.find_links:
            folder = Path(link[len("file://") :] if link.startswith("file://") else link)
            if (folder / art.filename).is_file():
                return (folder / art.filename).as_uri()
        tried = []
        for index in (
            self.indexes.index_url or default_index_url(),
            *self.indexes.extra_index_urls,
        ):
            key = (index, project)
            if key not in self._pages:
                try:
                    self._pages[key] = project_files(index, project)
                except FileNotFoundError:
                    self._pages[key] = {}
                except Exception as exc:
                    tried.append(f"{index} ({type(exc).__name__})")
                    continue
            if art.filename in self._pages[key]:
                return self._pages[key][art.filename]
            tried.append(index)
        raise InstallError(
            f"{art.filename} (from a portable lockfile) is on none of the configured indexes:"
            f" {', '.join(tried)}"
        )
