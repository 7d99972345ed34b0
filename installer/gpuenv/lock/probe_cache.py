"""A short-lived cache of what an index lists for a project, for the probe before each lock.

Asking every index for every framework package costs 0.1 to 0.3 s per lock; a lock repeated
within minutes (a lab locking its classes, `setup` after `lock`, a retry) asks again for the same
pages. Answers are kept for PROBE_TTL seconds in gpuenv's cache folder, keyed by index URL and
project. Only remote indexes are cached (a local folder is cheaper to read than the cache), and
failures never are, so an index that comes back is seen at once. The probe only narrows what
resolve may choose; uv reads the index itself when it locks, so a stale answer can at worst
make a lock fail with uv's own message, never lock a file that is not there.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from gpuenv.cache import cache_dir

PROBE_TTL = 600.0  # seconds
TTL_ENV = "GPUENV_PROBE_TTL"  # 0 turns the cache off
Fetch = Callable[[str, str], list[str]]


class ProjectMissing(FileNotFoundError):
    """The index answered: it has no such project (remembered like a listing)."""


def ttl() -> float:
    try:
        return max(0.0, float(os.environ.get(TTL_ENV, PROBE_TTL)))
    except ValueError:
        return PROBE_TTL


def _path(index: str, project: str) -> Path:
    key = hashlib.sha256(f"{index}\0{project}".encode()).hexdigest()
    return cache_dir() / "index-probe" / f"{key}.json"


def _read(index: str, project: str, max_age: float, now: float) -> Optional[list[str] | bool]:
    """The cached listing; True when the project was missing; None when absent or too old."""
    try:
        data = json.loads(_path(index, project).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("index") != index or data.get("project") != project:
        return None
    stamp = data.get("time")
    if not isinstance(stamp, (int, float)) or not 0 <= now - stamp <= max_age:
        return None
    files = data.get("files")
    if files is None and data.get("missing") is True:
        return True
    if isinstance(files, list) and all(isinstance(f, str) for f in files):
        return files
    return None


def _write(index: str, project: str, files: Optional[list[str]], now: float) -> None:
    path = _path(index, project)
    record = {"index": index, "project": project, "time": now, "files": files}
    if files is None:
        record["missing"] = True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only makes the next lock ask again


def cached_filenames(
    index: str,
    project: str,
    fetch: Fetch,
    is_missing: Callable[[Exception], bool],
    now: Callable[[], float] = time.time,
) -> list[str]:
    """fetch(index, project), answered from the cache when it is fresh."""
    max_age = ttl()
    if max_age <= 0 or not index.startswith(("http://", "https://")):
        return fetch(index, project)
    cached = _read(index, project, max_age, now())
    if cached is True:
        raise ProjectMissing(f"{index}: no project {project}")
    if isinstance(cached, list):
        return cached
    try:
        files = fetch(index, project)
    except Exception as exc:
        if is_missing(exc):
            _write(index, project, None, now())
        raise
    _write(index, project, files, now())
    return files
