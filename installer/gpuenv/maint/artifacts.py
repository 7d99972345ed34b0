"""The architectures a wheel's CUDA libraries carry, read from the wheel on its index.

The central directory (two or three range requests) says where each shared library starts;
each one is then fetched with one range request and inflated as it arrives, and its fatbin
headers are read as they stream by (recipes.fatbin). Nothing is kept but the headers, so a
600 MB TensorFlow wheel costs its download time and a few MB of memory, and members that are
not shared libraries are never fetched.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

from gpuenv.index.remote_wheel import (
    BoundExceeded,
    Budget,
    Member,
    RangeReader,
    WheelReadError,
    central_directory_at,
    members,
    read_range,
    stream_range,
)
from gpuenv.recipes.fatbin import Archs, FatbinScanner, Limits, sorted_ccs

CHUNK = 1 << 20
MAX_LIBRARY = 1 << 34  # 16 GiB inflated: above any real library; a bigger claim is refused
# Shared libraries read per wheel: the readings so far (scripts/maint/data/fatbins.json) found at
# most 7 with fatbins in one wheel, among at most a few hundred .so files in all (TensorFlow's
# wheels are the richest in them; an estimate, not recorded). Each costs two range requests and a
# stream, so tens of thousands of tiny ones would keep a run busy for hours.
MAX_LIBRARIES = 2_000
_LIBRARY = re.compile(r"\.(so(\.[0-9]+)*|pyd|dll)$")
_LOCAL = b"PK\x03\x04"
# NVIDIA's own libraries that some wheels bundle (torch 1.13 ships libcudnn, libcublas, ...):
# their architectures are NVIDIA's, not the framework build's, so they are listed apart
_VENDORED = re.compile(r"^lib(cu|nv|nccl)")


@dataclass(frozen=True)
class LibraryArchs:
    """One shared library of a wheel and the architectures its fatbins hold."""

    member: str
    size: int
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    other: tuple[str, ...]
    containers: int
    sass_everywhere: tuple[str, ...] = ()  # carried by every container, not only some
    ptx_everywhere: tuple[str, ...] = ()
    carried_by: tuple[tuple[str, int], ...] = ()  # ("sass:7.0", containers carrying it)

    @property
    def vendored(self) -> bool:
        """An NVIDIA library the wheel bundles (libcudnn, libcublas, libnvrtc, libnccl...)."""
        return bool(_VENDORED.match(self.member.rsplit("/", 1)[-1]))

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> LibraryArchs:
        """A saved reading (scripts/maint/data/fatbins.json) back, to judge it again."""
        return cls(
            member=str(doc["member"]),
            size=int(doc["size"]),
            sass=tuple(doc["sass"]),
            ptx=tuple(doc["ptx"]),
            other=tuple(doc["other"]),
            containers=int(doc["containers"]),
            sass_everywhere=tuple(doc.get("sass_in_every_container", ())),
            ptx_everywhere=tuple(doc.get("ptx_in_every_container", ())),
            carried_by=tuple(sorted((str(k), int(n)) for k, n in doc["carried_by"].items())),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "member": self.member,
            "size": self.size,
            "sass": list(self.sass),
            "ptx": list(self.ptx),
            "other": list(self.other),
            "containers": self.containers,
            "sass_in_every_container": list(self.sass_everywhere),
            "ptx_in_every_container": list(self.ptx_everywhere),
            "vendored": self.vendored,
            "carried_by": dict(self.carried_by),
        }


def _checked_name(name: str, url: str) -> str:
    """A member name is shown and matched, never used as a path; still, a name that could
    not be one inside a wheel (`../x`, `/etc/x`, a drive, control characters) means the file
    is not a wheel gpuenv should read."""
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or "\\" in name
        or ".." in parts
        or ":" in parts[0]
        or any(ord(c) < 32 for c in name)
    ):
        raise WheelReadError(f"{url}: member name {name!r} is not a relative path in a wheel")
    return name


def libraries(url: str, reader: RangeReader = read_range) -> list[tuple[str, Member]]:
    """The shared libraries (`.so`, `.so.N`, `.pyd`, `.dll`) among the wheel's members, each
    with where its data must end (Member.end): members that share bytes (a zip bomb made of
    overlapping members) are refused, and at most MAX_LIBRARIES are listed."""
    directory_at, directory = central_directory_at(url, reader)
    listed = list(members(directory))  # at most MAX_MEMBERS
    starts = sorted(member.offset for _, member in listed)
    if len(set(starts)) < len(starts):
        raise WheelReadError("two members start at the same offset: the zip's members overlap")
    out: list[tuple[str, Member]] = []
    for name, member in listed:
        _checked_name(name, url)
        if not _LIBRARY.search(name) or name.endswith("/"):
            continue
        if len(out) == MAX_LIBRARIES:
            raise BoundExceeded(
                f"more than {MAX_LIBRARIES} shared libraries: the bound on libraries read per"
                " wheel was reached"
            )
        after = bisect.bisect_right(starts, member.offset)
        end = starts[after] if after < len(starts) else directory_at
        if member.offset >= directory_at:
            raise WheelReadError(f"{name} starts inside the central directory: members overlap")
        out.append((name, dataclasses.replace(member, end=end)))
    return out


def _inflated(
    url: str, name: str, member: Member, reader: RangeReader, budget: Budget
) -> Iterator[bytes]:
    """The member's bytes, inflated chunk by chunk (memory bounded by CHUNK per step)."""
    if member.size > MAX_LIBRARY:
        raise WheelReadError(f"{url}: {name} declares {member.size} bytes, more than {MAX_LIBRARY}")
    header = reader(url, member.offset, member.offset + 29)
    if len(header) < 30 or header[:4] != _LOCAL:
        raise WheelReadError(f"{url}: no local header for {name}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start = member.offset + 30 + name_len + extra_len
    if member.end is not None and start + member.compressed > member.end:
        raise WheelReadError(
            f"{name}'s data runs into the next member's (offset {member.end}): the zip's"
            " members overlap"
        )
    total = 0
    raw = stream_range(url, start, member.compressed, budget)
    if member.method == 0:
        chunks: Iterator[bytes] = raw
    elif member.method == 8:
        chunks = _deflated(raw)
    else:
        raise WheelReadError(f"{url}: {name} uses zip method {member.method}")
    for data in chunks:
        budget.check_time()
        budget.inflate(len(data))
        total += len(data)
        if total > member.size:
            raise WheelReadError(f"{url}: {name} inflates beyond its declared {member.size} bytes")
        yield data
    if total != member.size:
        raise WheelReadError(f"{url}: {name} is truncated ({total} of {member.size} bytes)")


def _deflated(raw: Iterator[bytes]) -> Iterator[bytes]:
    inflater = zlib.decompressobj(-15)
    try:
        for data in raw:
            while data:
                out = inflater.decompress(data, CHUNK)
                data = inflater.unconsumed_tail
                if out:
                    yield out
        yield inflater.flush()
    except zlib.error as exc:
        raise WheelReadError(f"broken deflate stream: {exc}") from None


def library_archs(
    url: str,
    name: str,
    member: Member,
    reader: RangeReader = read_range,
    budget: Optional[Budget] = None,
    limits: Optional[Limits] = None,
) -> LibraryArchs:
    """Stream one library out of the wheel and read its fatbin headers, within the wheel's
    `budget` (time, bytes) and fatbin `limits`."""
    budget = budget or Budget.per_wheel()
    if reader is read_range:
        reader = budget.reader()
    scanner = FatbinScanner(f"{url.rsplit('/', 1)[-1]}:{name}", limits)
    for data in _inflated(url, name, member, reader, budget):
        scanner.feed(data)
    found: Archs = scanner.close()
    return LibraryArchs(
        member=name,
        size=member.size,
        sass=tuple(sorted_ccs(found.sass)),
        ptx=tuple(sorted_ccs(found.ptx)),
        other=tuple(sorted(found.other)),
        containers=found.containers,
        sass_everywhere=tuple(sorted_ccs(found.in_every_container("sass"))),
        ptx_everywhere=tuple(sorted_ccs(found.in_every_container("ptx"))),
        carried_by=tuple(sorted((f"{k}:{cc}", n) for (k, cc), n in found.carried_by.items())),
    )


def wheel_archs(
    url: str,
    reader: RangeReader = read_range,
    only: Optional[set[str]] = None,
    budget: Optional[Budget] = None,
) -> list[LibraryArchs]:
    """Every shared library of the wheel at `url` (or those named in `only`) that holds at
    least one fatbin container, with its architectures. The whole wheel is read within one
    `budget` (remote_wheel.Budget.per_wheel unless given) and one set of fatbin limits; a
    bound reached raises BoundExceeded (or FatbinBoundExceeded) naming it."""
    budget = budget or Budget.per_wheel()
    if reader is read_range:
        reader = budget.reader()
    limits = Limits()
    out = []
    for name, member in libraries(url, reader):
        if only is not None and name not in only:
            continue
        found = library_archs(url, name, member, reader, budget, limits)
        if found.containers:
            out.append(found)
    return out


SHARE = 10  # an arch is the build's when at least 1 in SHARE of its fatbins carries it


def build_lists(libs: list[LibraryArchs]) -> tuple[list[str], list[str]]:
    """The SASS and PTX lists of a wheel's build: those of its main library (its own library
    with the most fatbins: libtorch_cuda.so, TensorFlow's _pywrap_tensorflow_internal.so or
    libtensorflow_cc.so.2), counting an arch when at least a tenth of that library's fatbins
    carry it. Two FP8 kernels for sm_89 among torch 2.7.1's 378 are not its arch list;
    TensorFlow 2.8.4's sm_80 SASS, in 505 of 2328 (compute_80 PTX is in 2327), is. Side
    libraries built with lists of their own (torch's libtorch_cuda_linalg.so, with sm_50 where
    libtorch_cuda.so starts at sm_70) are reported, not counted. A heuristic: readings keep
    every count."""
    own = [lib for lib in libs if not lib.vendored and lib.containers]
    if not own:
        return [], []
    main = max(own, key=lambda lib: lib.containers)
    kept = {key for key, n in main.carried_by if n * SHARE >= main.containers}
    sass = {k.split(":", 1)[1] for k in kept if k.startswith("sass:")}
    ptx = {k.split(":", 1)[1] for k in kept if k.startswith("ptx:")}
    return sorted_ccs(sass), sorted_ccs(ptx)


def union(libs: list[LibraryArchs]) -> tuple[list[str], list[str]]:
    """The SASS and PTX architectures of a wheel's own build: what any of its libraries
    carries, bundled NVIDIA libraries left out."""
    own = [lib for lib in libs if not lib.vendored]
    sass = {cc for lib in own for cc in lib.sass}
    ptx = {cc for lib in own for cc in lib.ptx}
    return sorted_ccs(sass), sorted_ccs(ptx)
