"""Where each file a lockfile names comes from at install, and `gpuenv fetch`'s wheelhouse.

One cache for wheels: uv downloads every wheel and refuses one whose sha256 differs from the
lockfile's (`--require-hashes`), so `gather` hands it URLs and uv's cache holds the only copy.
The exception is a wheel whose URL needs credentials (user info, or a query that may be a
token): uv takes a direct URL only from its requirement list, a file, and a secret never goes
into a file; gpuenv downloads such a wheel itself (the credentials in memory only), like a conda
package, and uv reads the checked copy.

conda packages are still downloaded and hashed by gpuenv, kept content-addressed in
`<cache>/artifacts/<sha256>/<name>`, and handed to py-rattler as `file://` records. py-rattler
does not check `file://` packages at all, and its check of http(s) ones cannot be relied on: once
a download failed its check, py-rattler 0.28 records the expected sha256 against the package it
already had cached and installs that package for the altered hash on the next try (see
tests/envs/test_one_cache.py). gpuenv's copy keeps every entry of py-rattler's cache extracted
from bytes gpuenv checked.

`fetch_all` writes every file flat into a wheelhouse, each hashed as it is written; `install
--offline --from DIR` reads that folder in place, regular files only.

Names, URLs and hashes come from a lockfile (untrusted): gpuenv.lock.conda_lock.read has checked them
already, and they are checked again here: every path stays inside its folder (gpuenv.fs.safe_paths),
and a URL handed to uv cannot smuggle an option into its requirements file. gpuenv's own
downloads are retried with backoff on transient failures (a dropped connection, a 5xx, a cut
body), and a stalled one times out after GPUENV_DOWNLOAD_TIMEOUT seconds without data (default
60).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Optional, Union
from urllib.parse import unquote, urldefrag, urlsplit

from gpuenv.cache import tag_cache
from gpuenv.envs.errors import HashMismatchError, InstallError, StoreInputError
from gpuenv.envs.sources import PortableResolver, file_url_path
from gpuenv.fs.safe_paths import UnsafePathError, inside, is_sha256, plain_name
from gpuenv.index.config import IndexConfig
from gpuenv.index.origin import carries_secret
from gpuenv.lock.model import LockedEnvironment

CHUNK = 1 << 20
CONNECT_TIMEOUT_S = 15.0
READ_TIMEOUT_S = 60.0  # seconds without a byte before a download counts as stalled
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
    """A file gpuenv wrote and hashed itself."""

    artifact: Artifact
    path: Path


@dataclass(frozen=True)
class InstallSource:
    """Where an installer reads one artifact: for a wheel, an http(s) or `file://` URL that uv
    reads and checks against the lockfile's sha256; for a conda package, the `file://` URL of
    gpuenv's checked copy."""

    artifact: Artifact
    url: str

    @property
    def is_local(self) -> bool:
        return self.url.startswith("file://")


def artifacts_of(locked: LockedEnvironment) -> list[Artifact]:
    out = [
        Artifact(
            "conda",
            r["name"],
            r.get("file_name") or _filename(r["url"]),  # equal: gpuenv.lock.conda_lock.read checks
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
    indexes: Optional[IndexConfig] = None,
    progress: Optional[Progress] = None,
) -> list[InstallSource]:
    """Where the installers read every artifact from, or an error before anything is installed.

    Downloads (and hashes) the conda packages into `cache`, and for portable wheels the index
    pages that name their URLs; a wheel only when its URL needs credentials (its own, or a
    configured index's of the same host): uv would have to read them from a file, so gpuenv
    downloads it into `cache` (content-addressed, hashed) and uv reads that copy. uv downloads
    every other wheel. With `wheelhouse`, every file comes from that folder (offline).
    """
    read_timeout()  # a bad GPUENV_DOWNLOAD_TIMEOUT is refused before anything is fetched
    out = []
    cache = Path(os.path.abspath(cache))
    house = Path(os.path.abspath(wheelhouse)) if wheelhouse is not None else None
    resolver = PortableResolver(indexes or IndexConfig())
    for art in artifacts:
        _check_names(art)
        source: Source
        if house is not None:
            source = _wheelhouse_file(house, art)
            url = source.as_uri()
        else:
            source = url = resolver.url(art)
        if art.kind == "conda":  # py-rattler's own checks fall short: it gets a checked copy
            url = _checked_copy(cache, art, source, progress).as_uri()
        elif house is None and carries_secret(authed := resolver.with_credentials(url)):
            # uv would read the password (or a signed URL's token) from its requirement list,
            # a file: gpuenv downloads the wheel itself (hashed) and hands uv its checked copy
            url = _checked_copy(cache, art, authed, progress).as_uri()
        elif url.startswith("file://") and house is None:
            _regular_file(file_url_path(url))  # uv would block on a pipe, not refuse it
        out.append(InstallSource(art, _installer_url(art, url)))
    return out


def fetch_all(
    artifacts: list[Artifact],
    dest: Path,
    *,
    indexes: Optional[IndexConfig] = None,
    progress: Optional[Progress] = None,
) -> list[LocalArtifact]:
    """Every artifact as a checked file named plainly in `dest` (a wheelhouse for `--from`)."""
    out = []
    dest = Path(os.path.abspath(dest))
    resolver = PortableResolver(indexes or IndexConfig())
    for art in artifacts:
        _check_names(art)
        # a link there is named for what it is, before inside() resolves it
        _regular_or_absent(dest / art.filename, "gpuenv will not replace it")
        path = inside(dest, art.filename, f"{art.name}'s file name")
        if not (path.is_file() and _matches(path, art)):  # a flat folder may hold anything
            _copy_checked(resolver.with_credentials(resolver.url(art)), path, art, progress)
        out.append(LocalArtifact(art, path))
    return out


def _check_names(art: Artifact) -> None:
    plain_name(art.filename, f"{art.name}'s file name")
    if not is_sha256(art.sha256):
        raise UnsafePathError(f"{art.name}: sha256 {art.sha256!r:.80} is not 64 hex digits")


def _checked_copy(cache: Path, art: Artifact, source: Source, progress: Optional[Progress]) -> Path:
    """The artifact's content-addressed copy in the cache, written (and hashed) if absent."""
    dest = inside(cache, art.filename, f"{art.name}'s file name", "artifacts", str(art.sha256))
    _regular_or_absent(dest, "gpuenv will not replace it")
    if not dest.is_file():  # checked when written; links and other files are refused above
        tag_cache(cache)  # the first write: backup tools skip it, `cache clean` knows it
        _copy_checked(source, dest, art, progress)
    return dest


# What a URL handed to uv or py-rattler may contain: no space, quote or control character could
# start another option or requirement in uv's requirements file.
_SAFE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[!#-&(-~]+")
_PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def _installer_url(art: Artifact, url: str) -> str:
    if urlsplit(url).scheme not in ("http", "https", "file") or not _SAFE_URL.fullmatch(url):
        raise UnsafePathError(f"{art.name}: the URL {url!r:.120} cannot be handed to an installer")
    if not _PROJECT_NAME.fullmatch(art.name):
        raise UnsafePathError(f"{art.name!r:.80} is not a package name")
    return urldefrag(url).url  # the lockfile's sha256 is the one hash that counts


def _regular_file(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise UnsafePathError(f"{path} is not a regular file; gpuenv reads only regular files")


def _wheelhouse_file(house: Path, art: Artifact) -> Path:
    entry = house / plain_name(art.filename, f"{art.name}'s file name")
    if not os.path.lexists(entry):
        raise InstallError(
            f"{art.filename} is not in {house}; run `gpuenv fetch LOCKFILE -d"
            f" {house}` on a machine with network access"
        )
    # a link there is named for what it is, before inside() resolves it
    _regular_or_absent(entry, "gpuenv reads only regular files from a wheelhouse")
    return inside(house, art.filename, f"{art.name}'s file name")


def _regular_or_absent(path: Path, why: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UnsafePathError(f"{path} is a symbolic link; {why}")
    if not stat.S_ISREG(mode):
        raise UnsafePathError(f"{path} is not a regular file; {why}")


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


Source = Union[str, Path]  # a URL, or a local file (a wheelhouse entry)


def _copy_checked(source: Source, dest: Path, art: Artifact, progress: Optional[Progress]) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".partial-")
    except OSError as exc:
        raise InstallError(_disk_advice(dest, exc)) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            sha, md5 = _fill(out, source, art, progress)
        if art.sha256 and sha != art.sha256:
            raise HashMismatchError(
                f"{art.filename}: sha256 {sha} does not match the lockfile's"
                f" {art.sha256}; the file at {source} changed, or the lockfile was altered. Nothing"
                " was installed."
            )
        if art.md5 and md5 != art.md5:
            raise HashMismatchError(
                f"{art.filename}: md5 {md5} does not match the lockfile's {art.md5};"
                " nothing was installed."
            )
        _regular_or_absent(dest, "gpuenv will not replace it")
        os.replace(tmp, dest)
    except OSError as exc:
        raise InstallError(_disk_advice(dest, exc)) from None
    finally:
        tmp.unlink(missing_ok=True)


def _fill(out: Any, source: Source, art: Artifact, progress: Optional[Progress]) -> tuple[str, str]:
    """Write the source's bytes to `out`, retrying transient download failures from the start;
    the sha256 and md5 of what was written."""
    from gpuenv.index import retry

    tries = retry.attempts()
    for attempt in range(1, tries + 1):
        sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
        out.seek(0)
        out.truncate()
        try:
            for chunk, done, total in _read(source):
                out.write(chunk)
                sha.update(chunk)
                md5.update(chunk)
                if progress:
                    progress(art.filename, done, total)
            out.flush()
            return sha.hexdigest(), md5.hexdigest()
        except _Transient as exc:
            if attempt == tries:
                raise InstallError(
                    f"could not download {source} ({exc}; tried {tries} times). Check the"
                    " network or the index, then run the same command again: finished files"
                    " are kept."
                ) from None
            retry.pause(attempt)
    raise AssertionError("unreachable")


class _Transient(Exception):
    """A download failure worth another try: the connection, a timeout, a 5xx, a cut body."""


def _read(source: Source) -> Iterator[tuple[bytes, int, Optional[int]]]:
    if isinstance(source, Path) or source.startswith("file://"):
        # a wheelhouse entry is never followed through a link; neither blocks on a pipe
        wheelhouse = isinstance(source, Path)
        path = source if isinstance(source, Path) else file_url_path(source)
        with _open_regular(path, follow=not wheelhouse) as fh:
            total = os.fstat(fh.fileno()).st_size
            done = 0
            while chunk := fh.read(CHUNK):
                done += len(chunk)
                yield chunk, done, total
        return
    import requests

    from gpuenv.index.retry import transient_status

    try:
        with requests.get(
            source, stream=True, timeout=(CONNECT_TIMEOUT_S, read_timeout())
        ) as response:
            if transient_status(response.status_code):
                raise _Transient(f"HTTP {response.status_code}")
            response.raise_for_status()
            length = int(response.headers.get("Content-Length") or 0) or None
            done = 0
            for chunk in response.iter_content(CHUNK):
                done += len(chunk)
                yield chunk, done, length
            if length is not None and done < length:
                raise _Transient(f"the body stopped at {done} of {length} bytes")
    except requests.HTTPError as exc:
        raise InstallError(f"could not download {source}: {exc}") from None
    except (requests.ConnectionError, requests.Timeout) as exc:
        raise _Transient(_short(exc)) from None
    except requests.RequestException as exc:  # ChunkedEncodingError and friends: a cut body
        raise _Transient(_short(exc)) from None


def _open_regular(path: Path, *, follow: bool) -> BinaryIO:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{path} is not a regular file; gpuenv reads only regular files")
    return os.fdopen(fd, "rb")


def read_timeout() -> float:
    """GPUENV_DOWNLOAD_TIMEOUT: seconds, a finite number above 0 (requests would wait forever
    on inf, fail at once on 0, crash on nan or -1); anything else is a usage error (exit 2)."""
    import math

    text = os.environ.get("GPUENV_DOWNLOAD_TIMEOUT", "").strip()
    if not text:
        return READ_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or value > 86400:
        raise StoreInputError(
            f"GPUENV_DOWNLOAD_TIMEOUT={text!r:.40}: expected seconds, a number above 0 and at"
            " most 86400 (a day)"
        )
    return value


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 200 else text[:200] + "..."


def _disk_advice(path: Path, exc: OSError) -> str:
    from gpuenv.fs.disk_errors import disk_advice

    return disk_advice(
        path,
        exc,
        elsewhere="choose another folder",
        outcome="Nothing was installed.",
    )
