"""Reading single files out of a wheel on an index without downloading it.

A wheel is a zip file: its central directory at the end says where each member starts, so two
or three HTTP range requests fetch `torch/version.py` out of a 900 MB wheel. `file://` URLs
(local indexes) are read the same way with seeks. Everything read is untrusted: sizes are
bounded before anything is fetched or inflated, and no member is ever executed.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlsplit

from gpuenv.errors import NETWORK_EXIT, GpuenvError

TAIL = 64 * 1024  # the end-of-central-directory record sits in the last 64 KiB (+22 bytes)
MAX_DIRECTORY = 64 * 1024 * 1024  # torch's wheels list ~15k files in a few MB
MAX_MEMBER = 16 * 1024 * 1024  # version.py, build_info.py, METADATA are a few KB

_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"


class WheelReadError(GpuenvError, ValueError):
    """The file is not a readable wheel (or a member is missing or too large)."""

    exit_code = NETWORK_EXIT


# (url, start, end inclusive or None for "to the end", size hint) -> bytes
RangeReader = Callable[[str, int, Optional[int]], bytes]


@dataclass(frozen=True)
class Member:
    """Where a member's data is: zip method, compressed and inflated size, local header."""

    method: int
    compressed: int
    size: int
    offset: int


def read_range(url: str, start: int, end: Optional[int]) -> bytes:
    """Bytes start..end (inclusive) of a file:// or http(s) URL; a negative start counts from
    the end (a suffix range)."""
    scheme = urlsplit(url).scheme
    if scheme == "file":
        path = Path(unquote(urlsplit(url).path))
        with path.open("rb") as fh:
            if start < 0:
                fh.seek(max(0, path.stat().st_size + start))
                return fh.read(-start)
            fh.seek(start)
            return fh.read((end - start + 1) if end is not None else -1)
    if scheme not in ("http", "https"):
        raise WheelReadError(f"cannot read {url!r}: only file, http and https URLs")
    import requests  # lazily: not on the CLI start-up path

    spec = f"bytes={start}" if start < 0 else f"bytes={start}-{'' if end is None else end}"
    response = requests.get(url, headers={"Range": spec}, timeout=60, stream=True)
    response.raise_for_status()
    limit = MAX_DIRECTORY + TAIL
    data = response.raw.read(limit + 1, decode_content=True)
    if len(data) > limit:
        raise WheelReadError(f"{url}: the server sent more than asked for ({spec})")
    if response.status_code == 200:  # the server ignored the range: cut it ourselves
        data = data[start:] if start < 0 else data[start : None if end is None else end + 1]
    return bytes(data)


def read_member(url: str, member: str, reader: RangeReader = read_range) -> Optional[bytes]:
    """One member of the wheel at `url`, or None when the wheel has no such member."""
    directory = central_directory(url, reader)
    entry = _find(directory, member)
    if entry is None:
        return None
    return _read_entry(url, member, entry, reader)


def read_record(url: str, reader: RangeReader = read_range) -> Optional[bytes]:
    """The wheel's `<name>-<version>.dist-info/RECORD` (the one top-level .dist-info folder's;
    its name can differ from the file name's spelling), or None when there is none. Two such
    folders make it no valid wheel."""
    directory = central_directory(url, reader)
    found = [
        (name, entry)
        for name, entry in members(directory)
        if name.count("/") == 1 and name.endswith(".dist-info/RECORD")
    ]
    if len(found) > 1:
        raise WheelReadError(f"{url}: more than one .dist-info/RECORD")
    return _read_entry(url, found[0][0], found[0][1], reader) if found else None


def _read_entry(url: str, member: str, entry: Member, reader: RangeReader) -> bytes:
    if entry.size > MAX_MEMBER or entry.compressed > MAX_MEMBER:
        raise WheelReadError(f"{url}: {member} is larger than {MAX_MEMBER} bytes")
    header = reader(url, entry.offset, entry.offset + 29)
    if len(header) < 30 or header[:4] != _LOCAL:
        raise WheelReadError(f"{url}: no local header for {member}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start = entry.offset + 30 + name_len + extra_len
    raw = reader(url, start, start + entry.compressed - 1) if entry.compressed else b""
    if entry.method == 0:
        data = raw
    elif entry.method == 8:
        inflater = zlib.decompressobj(-15)
        data = inflater.decompress(raw, MAX_MEMBER + 1)
        if len(data) > MAX_MEMBER:
            raise WheelReadError(f"{url}: {member} inflates beyond {MAX_MEMBER} bytes")
    else:
        raise WheelReadError(f"{url}: {member} uses zip method {entry.method}")
    if len(data) != entry.size:
        raise WheelReadError(f"{url}: {member} is truncated")
    return data


def central_directory(url: str, reader: RangeReader = read_range) -> bytes:
    """The raw central directory of the zip file at `url` (bounded by MAX_DIRECTORY)."""
    tail = reader(url, -TAIL, None)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        raise WheelReadError(f"{url}: not a zip file (no end of central directory)")
    size, offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if offset == 0xFFFFFFFF or size == 0xFFFFFFFF:  # ZIP64: the real numbers are elsewhere
        locator = tail.rfind(_ZIP64_LOCATOR, 0, at)
        if locator < 0:
            raise WheelReadError(f"{url}: ZIP64 without its locator")
        (record_at,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
        record = reader(url, record_at, record_at + 55)
        if record[:4] != _ZIP64_EOCD:
            raise WheelReadError(f"{url}: broken ZIP64 end of central directory")
        size, offset = struct.unpack("<QQ", record[40:56])
    if size > MAX_DIRECTORY:
        raise WheelReadError(f"{url}: central directory of {size} bytes is too large")
    return reader(url, offset, offset + size - 1) if size else b""


def _find(directory: bytes, member: str) -> Optional[Member]:
    return next((entry for name, entry in members(directory) if name == member), None)


def members(directory: bytes) -> Iterator[tuple[str, Member]]:
    """(name, where its data is) of each member a central directory lists, in order. Names
    are untrusted: callers that show or match them check them first."""
    pos = 0
    while pos + 46 <= len(directory) and directory[pos : pos + 4] == _CENTRAL:
        (method,) = struct.unpack("<H", directory[pos + 10 : pos + 12])
        compressed, size = struct.unpack("<II", directory[pos + 20 : pos + 28])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[pos + 28 : pos + 34])
        (offset,) = struct.unpack("<I", directory[pos + 42 : pos + 46])
        name = directory[pos + 46 : pos + 46 + name_len]
        extra = directory[pos + 46 + name_len : pos + 46 + name_len + extra_len]
        if 0xFFFFFFFF in (compressed, size, offset):
            size, compressed, offset = _zip64_extra(extra, size, compressed, offset)
        yield name.decode("utf-8", "replace"), Member(method, compressed, size, offset)
        pos += 46 + name_len + extra_len + comment_len


def _zip64_extra(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[pos : pos + 4])
        if tag == 1:
            values = list(struct.unpack(f"<{length // 8}Q", extra[pos + 4 : pos + 4 + length]))
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if compressed == 0xFFFFFFFF and values:
                compressed = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
            break
        pos += 4 + length
    return size, compressed, offset
