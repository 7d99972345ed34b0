"""Which files each wheel installs (its RECORD), and the wheels of one environment that would
overwrite each other's files.

On Linux, torch, TensorFlow and JAX take CUDA, cuDNN and NCCL from NVIDIA's pip wheels, and the
cu11/cu12/cu13 wheels of one library install into the same `nvidia/<lib>/lib/` folder: two of
them in one environment put two builds of `libcudnn.so.9` on one path, and whichever installs
last wins. The knowledge base predicts that; this module checks the wheels themselves, whatever
the knowledge base says: a path two wheels write with different content is an overlap. The
same bytes on one path (NVIDIA's old wheels all ship an empty `nvidia/__init__.py`) are not.

A RECORD is read from the wheel's central directory and one member (HTTP range requests for a
remote wheel, seeks for a local one: gpuenv.index.remote_wheel) and cached by the wheel's
sha256, which names its bytes, in gpuenv's cache folder as JSON (data, never code). Everything
in a wheel is untrusted: paths that leave the environment are refused, sizes are bounded.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Optional, Union

from gpuenv.errors import FAILURE_EXIT, GpuenvError
from gpuenv.fs.safe_paths import is_sha256

MAX_RECORD_LINES = 200_000  # torch lists about 15,000 files
CACHE_KIND = "wheel-records"
_DATA_DIR = re.compile(r"^[^/]+\.data/(purelib|platlib|scripts|headers|data)/(.+)$")


class WheelOverlapError(GpuenvError):
    """Two wheels of one environment would write the same file with different content."""

    exit_code = FAILURE_EXIT


class WheelRecordError(GpuenvError):
    """A wheel's RECORD is missing, too large, or names a path outside the environment."""

    exit_code = FAILURE_EXIT


@dataclass(frozen=True)
class LockedWheel:
    """One wheel of an environment: its file name, where to read it, the sha256 of its bytes."""

    filename: str
    url: str
    sha256: str


@dataclass(frozen=True)
class Overlap:
    first: str  # wheel file names
    second: str
    path: str  # one path both write (where the environment puts it)
    count: int  # how many paths they share

    def message(self) -> str:
        more = f" and {self.count - 1} more" if self.count > 1 else ""
        return f"{self.first} and {self.second} both install {self.path}{more}"


# url -> the wheel's RECORD (None when it has none)
RecordReader = Callable[[str], Optional[bytes]]
# the same, or the RECORD already parsed (parse_record: read and parsed while uv ran)
RecordSource = Callable[[str], Union[bytes, dict[str, str], None]]


def default_reader(url: str) -> Optional[bytes]:
    from gpuenv.index.remote_wheel import read_record

    return read_record(url)


def installed_path(path: str, wheel: str) -> Optional[str]:
    """Where a RECORD path lands in the environment, as a relative POSIX path keyed by scheme
    (`scripts:`, `headers:`, `data:` outside site-packages); None for the wheel's own
    .dist-info files, which no other wheel shares. A path that leaves its folder is refused."""
    scheme = ""
    found = _DATA_DIR.match(path)
    if found:
        kind, path = found.groups()
        scheme = "" if kind in ("purelib", "platlib") else f"{kind}:"
    normal = posixpath.normpath(path)
    if (
        not path
        or path.startswith(("/", "\\"))
        or normal == ".."
        or normal.startswith("../")
        or "\\" in path
        or ":" in path
        or "\x00" in path
    ):
        raise WheelRecordError(f"{wheel}: its RECORD names {path!r}, outside the environment")
    first = normal.split("/", 1)[0]
    if not scheme and first.endswith(".dist-info"):
        return None
    return scheme + normal


def parse_record(data: bytes, wheel: str) -> dict[str, str]:
    """installed path -> its hash as the RECORD gives it ("" where it gives none)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WheelRecordError(f"{wheel}: its RECORD is not UTF-8") from exc
    out: dict[str, str] = {}
    for count, row in enumerate(csv.reader(io.StringIO(text))):
        if count >= MAX_RECORD_LINES:
            raise WheelRecordError(f"{wheel}: its RECORD lists more than {MAX_RECORD_LINES} files")
        if not row:
            continue
        where = installed_path(row[0], wheel)
        if where is not None:
            out[where] = row[1] if len(row) > 1 else ""
    return out


def record_of(wheel: LockedWheel, reader: RecordReader = default_reader) -> dict[str, str]:
    """The wheel's installed paths and hashes, from the cache when its sha256 was read before."""
    cached = _cached(wheel.sha256)
    return cached if cached is not None else _read_and_keep(wheel, reader)


def _read_and_keep(wheel: LockedWheel, reader: RecordSource) -> dict[str, str]:
    """The wheel's record read from the wheel itself, and kept in the cache by its sha256."""
    data = reader(wheel.url)
    if data is None:
        raise WheelRecordError(f"{wheel.filename} has no .dist-info/RECORD; it is no valid wheel")
    record = data if isinstance(data, dict) else parse_record(data, wheel.filename)
    _store(wheel.sha256, record)
    return record


def records(
    wheels: Iterable[LockedWheel], reader: RecordSource = default_reader
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """wheel file name -> its record, read side by side (most are range requests); and one
    line for each wheel whose RECORD could not be read (unreachable, no range support)."""
    from concurrent.futures import ThreadPoolExecutor

    from gpuenv.index.remote_wheel import WheelReadError
    from gpuenv.output.redact import redact_text

    todo = sorted({w.filename: w for w in wheels}.values(), key=lambda w: w.filename)
    out: dict[str, dict[str, str]] = {}
    unread: list[str] = []

    def one(wheel: LockedWheel) -> tuple[LockedWheel, Optional[dict[str, str]], str]:
        try:
            return wheel, _read_and_keep(wheel, reader), ""  # not cached: see below
        except (WheelReadError, OSError) as exc:
            return wheel, None, str(exc)
        except Exception as exc:  # requests' errors: the check is skipped, and says so
            if type(exc).__module__.startswith(("requests", "urllib3")):
                return wheel, None, type(exc).__name__
            raise

    for wheel in todo:  # a cached record is a file read: no thread for it
        cached = _cached(wheel.sha256)
        if cached is not None:
            out[wheel.filename] = cached
    todo = [w for w in todo if w.filename not in out]
    if not todo:
        return out, unread
    with ThreadPoolExecutor(max_workers=8) as pool:
        for wheel, record, why in pool.map(one, todo):
            if record is None:
                why = redact_text(why)  # an index URL's password stays out of the note
                unread.append(f"{wheel.filename}: its file list could not be read ({why})")
            else:
                out[wheel.filename] = record
    return out, unread


def overlaps(found: dict[str, dict[str, str]]) -> list[Overlap]:
    """Every pair of wheels that write one path with different content (one entry a pair)."""
    owner: dict[str, tuple[str, str]] = {}  # path -> (wheel, hash)
    shared: dict[tuple[str, str], list[str]] = {}
    for wheel in sorted(found):  # the first wheel (by name) to write a path owns it
        for path, digest in found[wheel].items():
            seen = owner.get(path)
            if seen is None:
                owner[path] = (wheel, digest)
            elif not digest or seen[1] != digest:
                shared.setdefault((seen[0], wheel), []).append(path)
    return [
        Overlap(first, second, min(paths), len(paths))
        for (first, second), paths in sorted(shared.items())
    ]


def refuse_overlaps(
    wheels: Iterable[LockedWheel], what: str, reader: RecordSource = default_reader
) -> list[str]:
    """Raise WheelOverlapError naming both wheels and one shared path when any two overlap;
    returns a note for each wheel that could not be checked (never silently unchecked).

    A set of wheels found clean once (every RECORD read, no two writing one path) is clean by
    their sha256s ever after: a re-lock or a reinstall of the same wheels reads no RECORD again
    (a TensorFlow lock's 44 wheels: 3 MB of cached JSON, 20-25 ms)."""
    wheels = list(wheels)
    clean = _set_key(wheels)
    if clean is not None and _cached_set(clean):
        return []
    found, unread = records(wheels, reader)
    clashes = overlaps(found)
    if clashes:
        lines = "\n".join(f"  {o.message()}" for o in clashes[:8])
        more = f"\n  ... and {len(clashes) - 8} more pairs" if len(clashes) > 8 else ""
        raise WheelOverlapError(
            f"{what}: wheels would overwrite each other's files in one environment:\n"
            f"{lines}{more}\nWhichever installed last would win, and a framework would load a"
            " library built for another. Choose releases whose NVIDIA libraries agree (`gpuenv"
            " explain`), or one environment per framework."
        )
    if clean is not None and not unread:
        _store_set(clean)
    return [f"not checked for overlapping files: {line}" for line in unread]


def _set_key(wheels: list[LockedWheel]) -> Optional[str]:
    """The name of a set of wheels by content (their sha256s); None where one has none."""
    digests = sorted({w.sha256 for w in wheels})
    if not digests or not all(is_sha256(d) for d in digests):
        return None
    import hashlib

    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


_CLEAN = b"no two of these wheels write one path\n"


def _cached_set(key: str) -> bool:
    from gpuenv.cache import cache_root
    from gpuenv.fs.private_read import read_private

    raw, _ = read_private(os.path.join(cache_root(), CACHE_KIND), f"set-{key}", len(_CLEAN))
    return raw == _CLEAN


def _store_set(key: str) -> None:
    from gpuenv.cache import kind_dir
    from gpuenv.fs.atomic_write import atomic_write_bytes

    with contextlib.suppress(OSError, GpuenvError):  # a cache: the next run reads them again
        # not flushed to disk (as _store): a marker a power loss cut short is not _CLEAN
        atomic_write_bytes(kind_dir(CACHE_KIND) / f"set-{key}", _CLEAN, durable=False)


# -- the cache: sha256 -> RECORD, JSON in gpuenv's cache folder ------------------------------


def _cached(sha256: str) -> Optional[dict[str, str]]:
    if not is_sha256(sha256):
        return None
    from gpuenv.cache import cache_dir
    from gpuenv.fs.private_read import read_private

    raw, _ = read_private(cache_dir() / CACHE_KIND, f"{sha256}.json", 64 << 20)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        return None
    return data


def _store(sha256: str, record: dict[str, str]) -> None:
    if not is_sha256(sha256):
        return
    from gpuenv.cache import kind_dir
    from gpuenv.fs.atomic_write import atomic_write_text

    try:
        folder = kind_dir(CACHE_KIND)
        # not flushed to disk: the lock waits for these writes, and a file a power loss cut
        # short is no JSON object (_cached reads it as absent)
        text = json.dumps(record, sort_keys=True)
        atomic_write_text(folder / f"{sha256}.json", text, durable=False)
    except (OSError, GpuenvError):
        pass  # a cache: the next run reads the RECORD again
