"""Which GPU architectures a CUDA library carries: the headers of its fatbin containers.

nvcc puts each compilation unit's device code in a fatbin container (in the ELF `.nv_fatbin`
section, or, in older or hand-linked libraries, in a data section): a 16-byte header (magic
0xBA55ED50, version u16 = 1, header size u16 = 16, payload size u64) followed by entries, each
a header (kind u16: 1 PTX, 2 ELF/SASS; version u16; header size u32; payload size u64; ...;
the architecture number u32 at offset 28, e.g. 86 for sm_86/compute_86; flags u64 at offset 40,
0x2000 (LZ4) or 0x8000 (zstd) marking a compressed payload) and its payload. The offsets were
checked against the output of nvcc 13.0 (`-fatbin`, `-shared`, with and without
`-Xfatbin=-compress-all`). Only headers are read: payloads, compressed or not, are skipped, so
the scanner takes a library as a stream, in order, with memory bounded by one header.

Everything here is untrusted input: sizes are checked against their container before they
are used, and a container cut short is an error, not a silent partial answer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Optional

from gpuenv.errors import FAILURE_EXIT, GpuenvError

MAGIC = 0xBA55ED50
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEADER = 16
_ENTRY_MIN = 64  # an entry header's fixed part; PTX entries carry 16 bytes more (options)
_ENTRY_MAX = 64 * 1024  # nvcc writes 64 or 80; anything near this is not a fatbin
MAX_CONTAINER = 1 << 34  # 16 GiB: larger than any library; a bigger claim is hostile
# Containers and entries looked at per wheel: TensorFlow 2.12.1's, the most of any wheel read so
# far (scripts/maint/data/fatbins.json), are 2,515 containers and about 14,000 entries. Each costs
# Python-level work: millions of empty entries would take minutes and, counted, gigabytes.
MAX_RECORDS = 200_000
# Magic numbers that turn out to start no container, per wheel: four given bytes turn up about
# once in 4 GB of compressed data, a few times in host code that checks them. A flood of them
# (a library of nothing else) would cost a Python step every four bytes.
MAX_FALSE_MAGICS = 10_000
# Distinct (kind, architecture) pairs per wheel: real libraries carry at most a dozen, and all
# CUDA architectures so far are about 25 of each kind.
MAX_ARCHITECTURES = 128
KINDS = {1: "ptx", 2: "sass"}
_COMPRESSED = 0x2000 | 0x8000


class FatbinError(GpuenvError, ValueError):
    """A fatbin container is malformed or cut short."""

    exit_code = FAILURE_EXIT


class FatbinBoundExceeded(FatbinError):
    """Scanning went past one of its bounds (MAX_RECORDS, MAX_FALSE_MAGICS, MAX_ARCHITECTURES)."""


@dataclass
class Limits:
    """What the scanners of one wheel's libraries may still look at, shared between them."""

    records: int = field(default_factory=lambda: MAX_RECORDS)
    false_magics: int = field(default_factory=lambda: MAX_FALSE_MAGICS)
    architectures: set[tuple[str, int]] = field(default_factory=set)

    def record(self, where: str) -> None:
        self.records -= 1
        if self.records < 0:
            raise FatbinBoundExceeded(
                f"{where}: more than {MAX_RECORDS} fatbin containers and entries: the bound on"
                " fatbin entries per wheel was reached"
            )

    def false_magic(self, where: str) -> None:
        self.false_magics -= 1
        if self.false_magics < 0:
            raise FatbinBoundExceeded(
                f"{where}: more than {MAX_FALSE_MAGICS} fatbin magic numbers that start no"
                " container: the bound on false fatbin magics per wheel was reached"
            )

    def architecture(self, key: tuple[str, int], where: str) -> None:
        self.architectures.add(key)
        if len(self.architectures) > MAX_ARCHITECTURES:
            raise FatbinBoundExceeded(
                f"{where}: more than {MAX_ARCHITECTURES} distinct fatbin architectures: the"
                " bound on fatbin architectures per wheel was reached"
            )


@dataclass(frozen=True)
class FatbinEntry:
    """One entry of a fatbin container: its kind and the architecture number it targets."""

    kind: str  # "sass", "ptx", or "kind-N" for kinds gpuenv does not know (LTO IR, ...)
    arch: int  # 86 for sm_86 / compute_86, 100 for sm_100
    compressed: bool
    offset: int  # where its header starts in the scanned bytes

    @property
    def compute_capability(self) -> str:
        """The architecture as "X.Y": 86 -> "8.6", 120 -> "12.0"."""
        return f"{self.arch // 10}.{self.arch % 10}"


@dataclass
class Archs:
    """What a scan found: the SASS and PTX architectures ("X.Y") and how many containers."""

    sass: set[str] = field(default_factory=set)
    ptx: set[str] = field(default_factory=set)
    other: set[str] = field(default_factory=set)
    containers: int = 0
    entries: int = 0
    # how many containers carry each ("sass", "7.0"): an arch that only some compilation units
    # carry does not run the whole library
    carried_by: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, entry: FatbinEntry) -> None:
        self.entries += 1
        bucket = {"sass": self.sass, "ptx": self.ptx}.get(entry.kind, self.other)
        bucket.add(entry.compute_capability if entry.kind in KINDS.values() else entry.kind)

    def end_container(self, entries: list[FatbinEntry]) -> None:
        self.containers += 1
        for key in {(e.kind, e.compute_capability) for e in entries}:
            self.carried_by[key] = self.carried_by.get(key, 0) + 1

    def in_every_container(self, kind: str) -> set[str]:
        """The architectures of `kind` that every container carries."""
        return {cc for (k, cc), n in self.carried_by.items() if k == kind and n == self.containers}


def _cc_key(cc: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in cc.split("."))


def sorted_ccs(ccs: set[str]) -> list[str]:
    """Compute capabilities in numeric order (5.2 before 10.0)."""
    return sorted(ccs, key=_cc_key)


class FatbinScanner:
    """Feed a library's bytes in order (`feed`), then `close`; `archs` holds what was found.

    A magic number alone does not make a container (four bytes of compressed data match it
    now and then): the header's version and size and the first entry's kind and header size
    must also be those nvcc writes. Once they are, the container's sizes must hold up.
    """

    def __init__(self, where: str = "library", limits: Optional[Limits] = None) -> None:
        self.where = where
        self.archs = Archs()
        self.limits = limits if limits is not None else Limits()
        self.found: list[FatbinEntry] = []  # the current container's entries (memory: one's)
        self._buf = bytearray()
        self._pos = 0  # offset of _buf[0] in the stream
        self._skip = 0  # payload bytes still to pass over
        self._end = -1  # end of the current container, or -1 while searching
        self._start = 0  # where the current container began

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        while self._step():
            pass

    def close(self) -> Archs:
        if self._end >= 0 and (self._skip or self._pos < self._end):
            raise FatbinError(
                f"{self.where}: the fatbin container at offset {self._start} declares"
                f" {self._end - self._start} bytes but the data ends at"
                f" {self._pos + len(self._buf)} (truncated)"
            )
        return self.archs

    def _drop(self, n: int) -> None:
        del self._buf[:n]
        self._pos += n

    def _step(self) -> bool:
        """One move of the state machine; False when it needs more bytes."""
        if self._skip:
            n = min(self._skip, len(self._buf))
            self._drop(n)
            self._skip -= n
            return not self._skip
        if self._end < 0:
            return self._search()
        if self._pos >= self._end:
            self.archs.end_container(self.found)
            self.found = []
            self._end = -1
            return True
        return self._entry()

    def _search(self) -> bool:
        at = self._buf.find(_MAGIC_BYTES)
        if at < 0:
            self._drop(max(0, len(self._buf) - 3))  # a magic may straddle two chunks
            return False
        self._drop(at)
        if len(self._buf) < _HEADER + 8:
            return False
        _, version, header, size = struct.unpack_from("<IHHQ", self._buf, 0)
        kind, _, entry_header = struct.unpack_from("<HHI", self._buf, _HEADER)
        if (
            version != 1
            or header != _HEADER
            or (size and (kind == 0 or kind > 0xFF or not _ENTRY_MIN <= entry_header <= _ENTRY_MAX))
        ):
            self.limits.false_magic(self.where)
            self._drop(1)  # not a container: keep looking after this byte
            return True
        if size > MAX_CONTAINER:
            raise FatbinError(
                f"{self.where}: the fatbin container at offset {self._pos} declares {size}"
                f" bytes, more than {MAX_CONTAINER}"
            )
        self.limits.record(self.where)
        self._start = self._pos
        self.found = []
        self._end = self._pos + _HEADER + size
        self._drop(_HEADER)
        return True

    def _entry(self) -> bool:
        left = self._end - self._pos
        if left < _ENTRY_MIN:
            raise FatbinError(
                f"{self.where}: the fatbin container at offset {self._start} ends inside an"
                f" entry header (offset {self._pos}, {left} bytes left)"
            )
        if len(self._buf) < _ENTRY_MIN:
            return False
        kind, _, header, size = struct.unpack_from("<HHIQ", self._buf, 0)
        (arch,) = struct.unpack_from("<I", self._buf, 28)
        (flags,) = struct.unpack_from("<Q", self._buf, 40)
        if not _ENTRY_MIN <= header <= _ENTRY_MAX or header + size > left:
            raise FatbinError(
                f"{self.where}: the fatbin entry at offset {self._pos} (header {header} bytes,"
                f" payload {size} bytes) runs past the end of its container (offset"
                f" {self._end})"
            )
        self.limits.record(self.where)
        entry = FatbinEntry(
            kind=KINDS.get(kind, f"kind-{kind}"),
            arch=arch,
            compressed=bool(flags & _COMPRESSED),
            offset=self._pos,
        )
        self.limits.architecture((entry.kind, arch), self.where)
        self.found.append(entry)
        self.archs.add(entry)
        self._skip = header + size
        return True


def scan(data: bytes, where: str = "library") -> Archs:
    """The architectures of every fatbin container in `data` (a whole library in memory)."""
    scanner = FatbinScanner(where)
    scanner.feed(data)
    return scanner.close()
