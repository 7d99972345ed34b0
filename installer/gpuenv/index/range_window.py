"""A wheel's central directory read together with the bytes before it, where a wheel keeps its
RECORD: remote_wheel.read_record then answers the RECORD's reads from those bytes, two range
requests in most wheels instead of four (a cold lock reads every locked wheel's RECORD). Where
the wheel's last 64 KiB, read first to find the directory, already hold the directory and the
RECORD (most wheels: NVIDIA's, and any with a few hundred files), they answer everything: one
request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from gpuenv.index.remote_wheel import RangeReader

# Read with the central directory: the RECORD before it is about as large as the directory
# (a line per file, against the directory's entry per file, compressed), plus a few members
# after it in some wheels (licenses). A larger directory (torch's MBs) is read on its own.
WINDOW_EXTRA = 16 * 1024
WINDOW_MAX = 4 * 1024 * 1024


class ReadWithDirectory:
    """A RangeReader for one wheel that reads its first absolute range (the central directory)
    together with as many bytes before it, and answers later ranges inside those bytes from
    them; any other range is read as asked."""

    def __init__(self, reader: RangeReader) -> None:
        self._reader = reader
        self._start = -1  # where the bytes held start in the file; -1: none held yet
        self._data = b""

    def hold(self, start: int, data: bytes) -> None:
        """Bytes read already (the tail), found to start at `start` in the file: ranges inside
        them are answered from them, and a range just before them is read up to them."""
        if self._start < 0:  # a negative start is nothing held
            self._start, self._data = start, data

    def __call__(self, url: str, start: int, end: Optional[int]) -> bytes:
        if start < 0 or end is None or end < start:
            return self._reader(url, start, end)  # the tail: where the file ends is not known
        if self._start < 0 and end - start + 1 <= WINDOW_MAX:
            self._start = max(0, start - (end - start + 1) - WINDOW_EXTRA)
            self._data = self._reader(url, self._start, end)
        elif start < self._start <= start + WINDOW_MAX:
            # a member's header before the held bytes (a RECORD followed by large members): its
            # data lies between, so read up to them at once, not the header then the data
            before = self._reader(url, start, self._start - 1)
            if len(before) == self._start - start:  # else the offsets would no longer line up
                self._start, self._data = start, before + self._data
        held_end = self._start + len(self._data)
        if 0 <= self._start <= start and end < held_end:
            return self._data[start - self._start : end - self._start + 1]
        return self._reader(url, start, end)
