"""A short-lived cache of what an index lists for a project, for the probe before each lock.

Asking every index for every framework package costs 0.1 to 0.3 s per lock; a lock repeated
within minutes (a lab locking its classes, `setup` after `lock`, a retry) asks again for the same
pages. Answers are kept for PROBE_TTL seconds in gpuenv's cache folder, keyed by index URL and
project. Only remote indexes are cached (a local folder is cheaper to read than the cache). Of
the failures, only a host name that does not exist is remembered, for GONE_TTL seconds (offline,
or an index host this network cannot see: every lock would import the HTTP client only to learn
it again); anything temporary (a timeout, a refused connection, a 5xx, a resolver that could not
answer) never is, so an index that comes back is seen at once. The probe only narrows what
resolve may choose; uv reads the index itself when it locks, so a stale answer can at worst
make a lock fail with uv's own message, never lock a file that is not there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional, Union

from gpuenv.cache import CacheError, cache_dir, kind_dir

PROBE_TTL = 600.0  # seconds
GONE_TTL = 60.0  # seconds: a host name that did not exist
TTL_ENV = "GPUENV_PROBE_TTL"  # 0 turns the cache off
MAX_ENTRY_BYTES = 16 << 20  # a listing of every file of a large project is well under this
Fetch = Callable[[str, str], list[str]]


class ProjectMissing(FileNotFoundError):
    """The index answered: it has no such project (remembered like a listing)."""


class HostGone(ConnectionError):
    """The index's host name did not exist when last asked (remembered for GONE_TTL)."""


Cached = Union[list[str], ProjectMissing, HostGone]  # a listing, or the failure to raise again


def failure_text(exc: BaseException) -> str:
    """How a failed look-up is named in the probe's notes (and kept in the cache)."""
    if isinstance(exc, HostGone):
        return str(exc)
    return f"{type(exc).__name__}: {str(exc)[:80]}"


def ttl() -> float:
    try:
        return max(0.0, float(os.environ.get(TTL_ENV, PROBE_TTL)))
    except ValueError:
        return PROBE_TTL


def _path(index: str, project: str) -> Path:
    key = hashlib.sha256(f"{index}\0{project}".encode()).hexdigest()
    return cache_dir() / "index-probe" / f"{key}.json"


def _load(path: Path) -> object:
    """The entry's JSON; None when it is absent, not a regular file (a link is not followed),
    too large or not JSON."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            return json.loads(fh.read(MAX_ENTRY_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError):
        return None


def _read(index: str, project: str, max_age: float, now: float) -> Optional[Cached]:
    """The cached answer (a listing, or the failure to raise again); None when there is none
    fresh enough. An entry stamped later than now (the clock went back) counts as stale."""
    from gpuenv.output.redact import redact_url

    data = _load(_path(index, project))
    if (
        not isinstance(data, dict)
        or data.get("index") != redact_url(index)
        or data.get("project") != project
    ):
        return None
    stamp = data.get("time")
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        return None
    gone = data.get("gone")
    if gone is not None:
        max_age = min(max_age, GONE_TTL)
    if not 0 <= now - stamp <= max_age:
        return None
    files = data.get("files")
    if gone is not None:
        return HostGone(gone) if isinstance(gone, str) and files is None else None
    if files is None and data.get("missing") is True:
        return ProjectMissing(f"{index}: no project {project}")
    if isinstance(files, list) and all(isinstance(f, str) for f in files):
        return files
    return None


def _write(index: str, project: str, now: float, **answer: object) -> None:
    from gpuenv.output.redact import redact_text, redact_url

    path = _path(index, project)  # keyed by the full URL; the password itself is not stored
    record = {"index": redact_url(index), "project": project, "time": now, "files": None}
    record.update({k: redact_text(v) if isinstance(v, str) else v for k, v in answer.items()})
    tmp: Optional[str] = None
    try:
        kind_dir(path.parent.name)  # not a planted link; tags the cache for `cache clean`
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        # replaces a link or a FIFO at the entry itself, never what it points to
        os.replace(tmp, path)
    except (OSError, CacheError):  # a read-only cache, a folder in the entry's place, a
        # planted link for the whole folder: the next lock asks again
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def cached_filenames(
    index: str,
    project: str,
    fetch: Fetch,
    is_missing: Callable[[Exception], bool],
    now: Callable[[], float] = time.time,
    is_gone: Callable[[Exception], bool] = lambda exc: False,
) -> list[str]:
    """fetch(index, project), answered from the cache when it is fresh. `is_missing`: the
    failure says the index has no such project; `is_gone`: its host name does not exist."""
    max_age = ttl()
    if max_age <= 0 or not index.startswith(("http://", "https://")):
        return fetch(index, project)
    cached = _read(index, project, max_age, now())
    if isinstance(cached, Exception):
        raise cached
    if cached is not None:
        return cached
    try:
        files = fetch(index, project)
    except Exception as exc:
        if is_missing(exc):
            _write(index, project, now(), missing=True)
        elif is_gone(exc):
            _write(index, project, now(), gone=failure_text(exc))
        raise
    _write(index, project, now(), files=files)
    return files
