"""Reading single files out of a wheel on an index without downloading it.

A wheel is a zip file: its central directory at the end says where each member starts, so two
or three HTTP range requests fetch `torch/version.py` out of a 900 MB wheel. `file://` URLs
(local indexes) are read the same way with seeks, and only from regular files (no FIFO, no
device). Everything read is untrusted: sizes are bounded before anything is fetched or
inflated, every read of one wheel shares one Budget (a deadline, not only a socket timeout, and
the bytes fetched and inflated), and no member is ever executed.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Optional
from urllib.parse import unquote, urlsplit

from gpuenv.errors import NETWORK_EXIT, GpuenvError
from gpuenv.index.range_window import ReadWithDirectory

TAIL = 64 * 1024  # the end-of-central-directory record sits in the last 64 KiB (+22 bytes)
MAX_DIRECTORY = 64 * 1024 * 1024  # torch's wheels list ~15k files in a few MB
MAX_MEMBER = 16 * 1024 * 1024  # version.py, build_info.py, METADATA are a few KB
# Members a central directory may list: torch's wheels list ~15k files (MAX_DIRECTORY's note),
# C++ headers included. More is not a wheel gpuenv reads: each library among them costs two
# range requests, so 60,000 of them kept a verify run busy for hours.
MAX_MEMBERS = 50_000
# Time to read one wheel's central directory and libraries: torch 1.13's 1.8 GB cu117 wheel, the
# largest verify reads, takes 15 minutes at 2 MB/s; twice that, then the wheel is given up on.
# A deadline, not a socket timeout: a server that drips a byte a second never trips a timeout.
WHEEL_SECONDS = 1800.0
# Bytes fetched for one wheel (its directory and libraries, each range counted as sent, a range
# the server ignored included): the largest wheels verify reads are 2-2.5 GB whole.
WHEEL_MAX_FETCHED = 4 << 30
# Bytes inflated for one wheel: torch 1.13's libraries, its bundled cuDNN and cuBLAS included,
# inflate to about 4 GB. Deflate reaches 1000:1, and members that overlap inflate the same bytes
# again and again: without this a 4 GiB fetch could be terabytes of work.
WHEEL_MAX_INFLATED = 16 << 30
# Time for one member or RECORD (read_member, read_record: three or four range requests of at
# most MAX_DIRECTORY bytes, a few MB in practice): five minutes is 64 MiB at 220 kB/s.
MEMBER_SECONDS = 300.0
# One wait for the socket (connecting, or for the next bytes): a stalled server is noticed.
READ_TIMEOUT_S = 60.0
CHUNK = 1 << 20  # a read's size: what a wheel's reader holds at once, per step

_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_ZIP64_MARK = 0xFFFFFFFF


class WheelReadError(GpuenvError, ValueError):
    """The file is not a readable wheel (or a member is missing or too large)."""

    exit_code = NETWORK_EXIT


class BoundExceeded(WheelReadError):
    """Reading a wheel went past one of its bounds (time, bytes, members...): the message says
    which, and its value."""


class Budget:
    """What reading one wheel may cost, shared by every read of it: a deadline and the bytes
    fetched. `until` (a whole run's deadline, named by `until_bound`) can bring the deadline
    nearer, never further."""

    def __init__(
        self,
        seconds: float,
        max_fetched: int,
        what: str = "wheel",
        until: Optional[float] = None,
        until_bound: str = "",
    ) -> None:
        self.deadline = time.monotonic() + seconds
        self.time_bound = f"the bound on time per {what} ({seconds:g} s)"
        if until is not None and until < self.deadline:
            self.deadline, self.time_bound = until, until_bound
        self.max_fetched = max_fetched
        self.fetched = 0
        self.inflated = 0

    @classmethod
    def per_wheel(cls, until: Optional[float] = None, until_bound: str = "") -> Budget:
        return cls(WHEEL_SECONDS, WHEEL_MAX_FETCHED, "wheel", until, until_bound)

    @classmethod
    def per_member(cls) -> Budget:
        return cls(MEMBER_SECONDS, WHEEL_MAX_FETCHED, "member")

    def out_of_time(self) -> BoundExceeded:
        return BoundExceeded(f"gave up: {self.time_bound} ran out")

    def check_time(self) -> None:
        if time.monotonic() >= self.deadline:
            raise self.out_of_time()

    def spend(self, n: int) -> None:
        self.fetched += n
        if self.fetched > self.max_fetched:
            raise BoundExceeded(
                f"gave up: the bound on bytes fetched per wheel ({self.max_fetched >> 20} MiB)"
                " was reached"
            )

    def inflate(self, n: int) -> None:
        self.inflated += n
        if self.inflated > WHEEL_MAX_INFLATED:
            raise BoundExceeded(
                f"gave up: the bound on bytes inflated per wheel ({WHEEL_MAX_INFLATED >> 20} MiB)"
                " was reached"
            )

    def reader(self) -> RangeReader:
        """read_range, charged to this budget."""
        return lambda url, start, end: read_range(url, start, end, self)


# (url, start, end inclusive or None for "to the end", size hint) -> bytes
RangeReader = Callable[[str, int, Optional[int]], bytes]


@dataclass(frozen=True)
class Member:
    """Where a member's data is: zip method, compressed and inflated size, local header; `end`,
    where known, is where the next member (or the central directory) starts: the member's data
    must end before it, or two members overlap."""

    method: int
    compressed: int
    size: int
    offset: int
    end: Optional[int] = None


def open_local(url: str) -> BinaryIO:
    """The regular file a file:// URL names, open; a FIFO, a device or a folder is refused
    without blocking on it (gpuenv.fs.safe_paths.open_regular)."""
    from gpuenv.fs.safe_paths import UnsafePathError, open_regular

    try:
        return open_regular(Path(unquote(urlsplit(url).path)), "wheel")
    except UnsafePathError as exc:
        raise WheelReadError(str(exc)) from None


@contextmanager
def _range(
    url: str, start: int, end: Optional[int], budget: Budget
) -> Iterator[tuple[bool, Iterator[bytes]]]:
    """(whole, chunks): the body answering a request for bytes start..end (a negative start
    counts from the end); `whole` when the server ignored the range and sends the whole file.
    Every chunk is charged to `budget` and arrives before its deadline."""
    scheme = urlsplit(url).scheme
    if scheme == "file":
        with open_local(url) as fh:
            size = os.fstat(fh.fileno()).st_size
            first = max(0, size + start) if start < 0 else start
            last = size - 1 if end is None or start < 0 else min(end, size - 1)
            fh.seek(first)
            yield False, _file_chunks(fh, last - first + 1, budget)
        return
    if scheme not in ("http", "https"):
        raise WheelReadError(f"cannot read {url!r}: only file, http and https URLs")
    from gpuenv.index import bounded_http

    spec = f"bytes={start}" if start < 0 else f"bytes={start}-{'' if end is None else end}"
    headers = {"Range": spec, "Accept-Encoding": "identity"}
    try:
        with bounded_http.get(
            url, headers, deadline=budget.deadline, timeout=READ_TIMEOUT_S
        ) as answer:
            answer.raise_for_status()
            yield answer.status_code == 200, _http_chunks(answer.chunks(), budget)
    except bounded_http.TooSlow:
        raise budget.out_of_time() from None
    except bounded_http.BrokenBody as exc:
        raise WheelReadError(str(exc)) from None


def _file_chunks(fh: BinaryIO, length: int, budget: Budget) -> Iterator[bytes]:
    while length > 0:
        budget.check_time()
        data = fh.read(min(CHUNK, length))
        if not data:
            return
        budget.spend(len(data))
        length -= len(data)
        yield data


def _http_chunks(chunks: Iterator[bytes], budget: Budget) -> Iterator[bytes]:
    for data in chunks:
        budget.spend(len(data))
        yield data


def stream_range(url: str, start: int, length: int, budget: Budget) -> Iterator[bytes]:
    """`length` bytes from `start`, in chunks, without holding them all (fewer when the file
    ends first)."""
    if length <= 0:
        return
    with _range(url, start, start + length - 1, budget) as (whole, chunks):
        skip = start if whole else 0  # the server ignored the range: pass over the start
        for data in chunks:
            if skip:
                cut = min(skip, len(data))
                data, skip = data[cut:], skip - cut
            if not data:
                continue
            data = data[:length]
            length -= len(data)
            yield data
            if length <= 0:
                return


def read_range(url: str, start: int, end: Optional[int], budget: Optional[Budget] = None) -> bytes:
    """Bytes start..end (inclusive) of a file:// or http(s) URL; a negative start counts from
    the end (a suffix range). At most MAX_DIRECTORY + TAIL bytes; without a `budget`, the call
    has MEMBER_SECONDS."""
    budget = budget or Budget.per_member()
    limit = MAX_DIRECTORY + TAIL
    data = bytearray()
    with _range(url, start, end, budget) as (whole, chunks):
        for chunk in chunks:
            data += chunk
            if len(data) > limit:
                raise WheelReadError(f"{url}: the server sent more than {limit} bytes for a range")
    if whole:  # the server ignored the range: cut it ourselves
        data = data[start:] if start < 0 else data[start : None if end is None else end + 1]
    return bytes(data)


def _charged(reader: RangeReader) -> RangeReader:
    """read_range with a budget of its own for one member's reads; any other reader as is."""
    return Budget.per_member().reader() if reader is read_range else reader


def read_member(url: str, member: str, reader: RangeReader = read_range) -> Optional[bytes]:
    """One member of the wheel at `url`, or None when the wheel has no such member."""
    reader = _charged(reader)
    directory = central_directory(url, reader)
    entry = _find(directory, member)
    if entry is None:
        return None
    return _read_entry(url, member, entry, reader)


def read_record(url: str, reader: RangeReader = read_range) -> Optional[bytes]:
    """The wheel's `<name>-<version>.dist-info/RECORD` (the one top-level .dist-info folder's;
    its name can differ from the file name's spelling), or None when there is none. Two such
    folders make it no valid wheel.

    One or two requests in most wheels, not four: the tail read to find the central directory
    holds it and the RECORD before it (the last member, by the wheel spec's advice) in most
    wheels; a larger directory is read together with the bytes before it, where the RECORD is,
    so the RECORD's header and data are then answered from those bytes."""
    reader = ReadWithDirectory(_charged(reader))
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
    return central_directory_at(url, reader)[1]


def central_directory_at(url: str, reader: RangeReader = read_range) -> tuple[int, bytes]:
    """Where the central directory starts, and its raw bytes (bounded by MAX_DIRECTORY)."""
    tail = reader(url, -TAIL, None)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        raise WheelReadError(f"{url}: not a zip file (no end of central directory)")
    size, offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if _ZIP64_MARK in (offset, size):  # ZIP64: the real numbers are elsewhere
        locator = tail.rfind(_ZIP64_LOCATOR, 0, at)
        if locator < 0 or len(tail) < locator + 16:
            raise WheelReadError(f"{url}: ZIP64 without its locator")
        (record_at,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
        record = reader(url, record_at, record_at + 55)
        if len(record) < 56 or record[:4] != _ZIP64_EOCD:
            raise WheelReadError(f"{url}: broken ZIP64 end of central directory")
        size, offset = struct.unpack("<QQ", record[40:56])
    elif size and at >= size and tail[at - size : at - size + 4] == _CENTRAL:
        _hold_tail(reader, offset - (at - size), tail[:at])
    if size > MAX_DIRECTORY:
        raise WheelReadError(f"{url}: central directory of {size} bytes is too large")
    directory = reader(url, offset, offset + size - 1) if size else b""
    if len(directory) != size:
        raise WheelReadError(
            f"{url}: the central directory is cut short ({len(directory)} of {size} bytes)"
        )
    return offset, directory


def _hold_tail(reader: RangeReader, start: int, tail: bytes) -> None:
    """Hand a reader that keeps bytes (ReadWithDirectory) the tail up to the end-of-directory
    record: the directory ends where that record starts, so the tail's place in the file is
    known, and the directory (and a RECORD before it) need no request of their own."""
    hold = getattr(reader, "hold", None)
    if hold is not None:
        hold(start, tail)


def _find(directory: bytes, member: str) -> Optional[Member]:
    return next((entry for name, entry in members(directory) if name == member), None)


def members(directory: bytes) -> Iterator[tuple[str, Member]]:
    """(name, where its data is) of each member a central directory lists, in order; more than
    MAX_MEMBERS is refused. Names are untrusted: callers that show or match them check them
    first."""
    pos = 0
    count = 0
    while pos + 46 <= len(directory) and directory[pos : pos + 4] == _CENTRAL:
        count += 1
        if count > MAX_MEMBERS:
            raise BoundExceeded(
                f"more than {MAX_MEMBERS} members: the bound on members per wheel was reached"
            )
        (method,) = struct.unpack_from("<H", directory, pos + 10)
        compressed, size = struct.unpack_from("<II", directory, pos + 20)
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", directory, pos + 28)
        (offset,) = struct.unpack_from("<I", directory, pos + 42)
        after = pos + 46 + name_len + extra_len + comment_len
        if after > len(directory):
            raise WheelReadError("a central directory entry runs past the directory's end")
        name = directory[pos + 46 : pos + 46 + name_len]
        extra = directory[pos + 46 + name_len : pos + 46 + name_len + extra_len]
        if _ZIP64_MARK in (compressed, size, offset):
            size, compressed, offset = _zip64_extra(extra, size, compressed, offset)
        yield name.decode("utf-8", "replace"), Member(method, compressed, size, offset)
        pos = after


def _zip64_extra(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    """The 64-bit numbers of a member's ZIP64 extra field (tag 1): one 8-byte value for each of
    size, compressed size and offset that the entry marks 0xFFFFFFFF, in that order."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if tag == 1:
            if len(body) < length:
                raise WheelReadError(
                    f"a ZIP64 extra field declares {length} bytes and holds {len(body)}"
                )
            values = [v for (v,) in struct.iter_unpack("<Q", body[: length - length % 8])]
            fields = [size, compressed, offset]
            for i, value in enumerate(fields):
                if value == _ZIP64_MARK:
                    if not values:
                        raise WheelReadError("a ZIP64 extra field is too short for its entry")
                    fields[i] = values.pop(0)
            return fields[0], fields[1], fields[2]
        pos += 4 + length
    raise WheelReadError("a member marked ZIP64 has no ZIP64 extra field")
