"""Reading one member out of a wheel with range requests, and refusing what is not a wheel."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Optional

import pytest

from gpuenv.index.remote_wheel import (
    MAX_MEMBER,
    WheelReadError,
    read_member,
    read_range,
)
from localrepos import build_wheel, serve_directory


def _counting(log: list[int]):  # type: ignore[no-untyped-def]
    def reader(url: str, start: int, end: Optional[int]) -> bytes:
        data = read_range(url, start, end)
        log.append(len(data))
        return data

    return reader


def test_a_member_comes_from_a_few_ranges_not_the_whole_wheel(tmp_path: Path) -> None:
    payload = {
        "torch/version.py": "__version__ = '2.16.0+cu126'\ncuda = '12.6'\n",
        "torch/lib/big.bin": os.urandom(8 * 1024 * 1024).hex(),  # 16 MB, incompressible
    }
    wheel = build_wheel(tmp_path, "torch", "2.16.0+cu126", files=payload)
    log: list[int] = []
    text = read_member(wheel.as_uri(), "torch/version.py", _counting(log))
    assert text == payload["torch/version.py"].encode()
    assert sum(log) < 200_000 < wheel.stat().st_size  # a few KB read of a ~9 MB file
    assert read_member(wheel.as_uri(), "torch/absent.py") is None


def test_over_http_even_when_the_server_ignores_ranges(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "torch", "2.16.0", files={"torch/version.py": "cuda = None\n"})
    with serve_directory(tmp_path) as base:
        assert read_member(base + wheel.name, "torch/version.py") == b"cuda = None\n"


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "torch-1.0-py3-none-any.whl"
    fake.write_bytes(b"not a zip at all" * 100)
    with pytest.raises(WheelReadError, match="not a zip"):
        read_member(fake.as_uri(), "torch/version.py")


def test_a_member_that_inflates_too_far_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb/version.py", b"\0" * (MAX_MEMBER + 1024))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(WheelReadError, match="larger than"):
        read_member(bomb.as_uri(), "bomb/version.py")


@pytest.mark.parametrize("url", ["ftp://host/x.whl", "/etc/passwd", "javascript:alert(1)"])
def test_only_file_and_http_urls(url: str) -> None:
    with pytest.raises(WheelReadError):
        read_member(url, "x")


def test_ranges_of_a_local_file_end_where_asked(tmp_path: Path) -> None:
    from gpuenv.index.remote_wheel import CHUNK, Budget, stream_range

    blob = tmp_path / "blob.bin"
    data = os.urandom(2 * CHUNK + 5)  # three reads' worth
    blob.write_bytes(data)
    url = blob.as_uri()
    budget = Budget(60, 16 * CHUNK)
    assert b"".join(stream_range(url, 3, 1, budget)) == data[3:4]
    assert b"".join(stream_range(url, 1, 2 * CHUNK + 2, budget)) == data[1 : 2 * CHUNK + 3]
    assert b"".join(stream_range(url, 0, 0, budget)) == b""
    # a negative start is a suffix, as over http: the end does not apply
    assert read_range(url, -1, 3) == data[-1:]
    assert read_range(url, -4, None) == data[-4:]


def test_the_fetch_bound_names_its_size_in_mib() -> None:
    from gpuenv.index.remote_wheel import BoundExceeded, Budget

    budget = Budget(60, 3 << 20)
    budget.spend(3 << 20)  # up to the bound itself is allowed
    with pytest.raises(BoundExceeded, match=r"bytes fetched per wheel \(3 MiB\) was reached"):
        budget.spend(1)


# gpuenv's bound on one member it reads (version.py, build_info.py, METADATA: a few KB)
MEMBER_LIMIT = 16 * 1024 * 1024


def test_a_member_of_exactly_16_mib_is_read(tmp_path: Path) -> None:
    wheel = tmp_path / "big-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("big/at_limit.bin", b"\0" * MEMBER_LIMIT)
        zf.writestr("big/over.bin", b"\0" * (MEMBER_LIMIT + 1))
    assert read_member(wheel.as_uri(), "big/at_limit.bin") == b"\0" * MEMBER_LIMIT
    with pytest.raises(WheelReadError, match=f"larger than {MEMBER_LIMIT} bytes"):
        read_member(wheel.as_uri(), "big/over.bin")


def _record_of(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        return zf.read(name)


def test_a_record_comes_with_the_central_directory_in_two_reads(tmp_path: Path) -> None:
    """The RECORD, last in a wheel, is read with the directory after it: two round trips (the
    tail, then the directory and what is before it), not four, on a cold lock's every wheel."""
    from gpuenv.index.remote_wheel import read_record

    # 3,000 files: a RECORD of ~60 KB compressed, more than the fixed slack the window adds
    files = {f"pkg/module_number_{i}.py": f"x = {i}\n" for i in range(3000)}
    files["pkg/big.bin"] = os.urandom(4 * 1024 * 1024).hex()  # the bulk lies before the RECORD
    wheel = build_wheel(tmp_path, "pkg", "1.0", files=files)
    log: list[int] = []
    assert read_record(wheel.as_uri(), _counting(log)) == _record_of(wheel)
    assert len(log) == 2, log
    assert sum(log) < wheel.stat().st_size // 5  # the directory, twice its size before it


def test_a_small_wheel_s_record_comes_in_one_read(tmp_path: Path) -> None:
    """Most wheels (NVIDIA's, any with a few hundred files) end in a RECORD and a directory
    that fit in the last 64 KiB, read first to find the directory: nothing more is asked."""
    from gpuenv.index.remote_wheel import read_record

    files = {f"pkg/m{i}.py": f"x = {i}\n" for i in range(200)}
    files["pkg/big.bin"] = os.urandom(512 * 1024).hex()  # the bulk lies before the RECORD
    wheel = build_wheel(tmp_path, "pkg", "1.0", files=files)
    log: list[int] = []
    assert read_record(wheel.as_uri(), _counting(log)) == _record_of(wheel)
    assert len(log) == 1, log


def _record_first(wheel: Path, out: Path, after: int) -> Path:
    """The wheel rewritten with its RECORD first, then `after` random bytes stored."""
    moved = out / wheel.name
    out.mkdir()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(moved, "w") as dst:
        names = src.namelist()
        first = [n for n in names if n.endswith("RECORD")]
        for name in first + [n for n in names if n not in first]:
            dst.writestr(name, src.read(name), zipfile.ZIP_DEFLATED)
        dst.writestr("pkg/big.bin", os.urandom(after), zipfile.ZIP_STORED)
    return moved


def test_a_record_before_large_members_is_read_up_to_the_tail(tmp_path: Path) -> None:
    """A RECORD first in the archive, 256 KiB before the tail: its header, its data and what
    follows up to the tail come in one read, not a header and then its data."""
    from gpuenv.index.remote_wheel import read_record

    wheel = build_wheel(tmp_path, "pkg", "1.0", files={"pkg/a.py": "a = 1\n"})
    moved = _record_first(wheel, tmp_path / "moved", 256 * 1024)
    log: list[int] = []
    assert read_record(moved.as_uri(), _counting(log)) == _record_of(wheel)
    assert len(log) == 2, log


def test_a_record_far_from_the_tail_is_read_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Further away than WINDOW_MAX, the RECORD's header and data are read on their own, not
    everything between them and the tail."""
    from gpuenv.index import range_window
    from gpuenv.index.remote_wheel import read_record

    monkeypatch.setattr(range_window, "WINDOW_MAX", 64 * 1024)
    wheel = build_wheel(tmp_path, "pkg", "1.0", files={"pkg/a.py": "a = 1\n"})
    moved = _record_first(wheel, tmp_path / "moved", 256 * 1024)
    log: list[int] = []
    assert read_record(moved.as_uri(), _counting(log)) == _record_of(wheel)
    assert len(log) == 3, log
    assert sum(log) < 100 * 1024


def _with_bytes_before_the_end_record(wheel: Path, junk: bytes) -> Path:
    """The wheel with `junk` between its central directory and its end record: the record
    still says where the directory starts and how long it is, and both stay true."""
    data = wheel.read_bytes()
    at = data.rfind(b"PK\x05\x06")
    bent = wheel.with_name("bent-" + wheel.name)
    bent.write_bytes(data[:at] + junk + data[at:])
    return bent


def test_a_directory_not_right_before_its_end_record_is_read_where_it_says(
    tmp_path: Path,
) -> None:
    """The tail answers only when the directory ends where the end record begins (checked by
    the directory's signature there): otherwise it is read at the offset the record gives."""
    from gpuenv.index.remote_wheel import read_record

    # larger than the tail: its first byte is not the file's first
    files = {"pkg/a.py": "a = 1\n", "pkg/big.bin": os.urandom(64 * 1024).hex()}
    wheel = build_wheel(tmp_path, "pkg", "1.0", files=files)
    bent = _with_bytes_before_the_end_record(wheel, b"\0" * 1000)
    log: list[int] = []
    assert read_record(bent.as_uri(), _counting(log)) == _record_of(wheel)
    assert len(log) == 2, log  # the tail, then the directory with the RECORD before it


def test_a_comment_that_imitates_a_directory_is_not_taken_for_one(tmp_path: Path) -> None:
    """A directory larger than what the tail holds before its end record is never looked for
    in the tail: a comment after the record, with a directory's signature where a directory
    that size would start, counting back from the tail's end, is ignored (here the directory
    does not end where the record begins, so the tail's place cannot be told from it)."""
    from gpuenv.index.remote_wheel import TAIL, read_record

    files = {f"pkg/module_{i:05}.py": "" for i in range(700)}
    wheel = build_wheel(tmp_path, "pkg", "1.0", files=files)
    data = _with_bytes_before_the_end_record(wheel, b"\0" * 1000).read_bytes()
    at = data.rfind(b"PK\x05\x06")
    size = int.from_bytes(data[at + 12 : at + 16], "little")
    comment_len = 30_000
    tail_at = TAIL - 22 - comment_len  # where the end record sits in the tail
    assert tail_at < size < TAIL - 22, size  # the directory does not fit before it
    # where tail[tail_at - size] lands, counting from the tail's end: inside the comment
    fake_at = TAIL + (tail_at - size) - (tail_at + 22)
    comment = bytearray(b"c" * comment_len)
    comment[fake_at : fake_at + 4] = b"PK\x01\x02"
    end = bytearray(data[at : at + 22])
    end[20:22] = comment_len.to_bytes(2, "little")
    crafted = tmp_path / "crafted" / wheel.name
    crafted.parent.mkdir()
    crafted.write_bytes(data[:at] + bytes(end) + bytes(comment))
    assert read_record(crafted.as_uri()) == _record_of(wheel)


def test_a_record_over_http_that_ignores_ranges_is_the_same(tmp_path: Path) -> None:
    from gpuenv.index.remote_wheel import read_record

    wheel = build_wheel(tmp_path, "pkg", "1.0", files={"pkg/a.py": "a = 1\n" * 1000})
    with serve_directory(tmp_path) as base:  # a plain file server: every answer is whole
        assert read_record(base + wheel.name) == _record_of(wheel)


def test_a_window_answers_only_ranges_wholly_inside_it() -> None:
    from gpuenv.index.range_window import ReadWithDirectory

    blob = bytes(range(256)) * 4096  # 1 MiB, each byte where it is
    asked: list[tuple[int, Optional[int]]] = []

    def reader(url: str, start: int, end: Optional[int]) -> bytes:
        asked.append((start, end))
        return blob[start:] if end is None else blob[start : end + 1]

    window = ReadWithDirectory(reader)
    assert window("u", 600_000, 600_999) == blob[600_000:601_000]  # read with 1,000 before
    held = asked[-1]
    assert held[0] < 600_000 - 1000 and held[1] == 600_999
    assert window("u", held[0], 600_999) == blob[held[0] : 601_000]  # its very ends: held
    assert window("u", 599_000, 599_009) == blob[599_000:599_010]
    assert len(asked) == 1
    assert window("u", 600_990, 601_000) == blob[600_990:601_001]  # one byte past: read
    assert window("u", held[0] - 1, held[0] + 5) == blob[held[0] - 1 : held[0] + 6]
    assert window("u", -100, None) == reader("u", len(blob) - 100, None)
    assert len(asked) == 5


def test_held_bytes_grow_back_only_by_a_range_that_came_whole() -> None:
    """A range before the held bytes, read up to them, joins them only when the server sent
    all of it: a shorter answer would shift every later offset."""
    from gpuenv.index.range_window import ReadWithDirectory

    blob = bytes(range(256)) * 4096
    asked: list[tuple[int, Optional[int]]] = []

    def short(url: str, start: int, end: Optional[int]) -> bytes:
        asked.append((start, end))
        data = blob[start:] if end is None else blob[start : end + 1]
        return data[:-1] if len(asked) == 1 else data  # the first answer lacks its last byte

    window = ReadWithDirectory(short)
    window.hold(500_000, blob[500_000:600_000])
    assert window("u", 400_000, 400_029) == blob[400_000:400_030]
    assert window("u", 400_030, 400_099) == blob[400_030:400_100]
    assert window("u", 550_000, 550_009) == blob[550_000:550_010]  # still held


def test_a_large_directory_is_read_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory past WINDOW_MAX (torch's MBs) is read as asked: twice its size would pass
    read_range's bound. One of WINDOW_MAX bytes still comes with the bytes before it."""
    from gpuenv.index import range_window

    monkeypatch.setattr(range_window, "WINDOW_MAX", 1000)
    asked: list[tuple[int, Optional[int]]] = []

    def reader(url: str, start: int, end: Optional[int]) -> bytes:
        asked.append((start, end))
        return b"x" * ((end or start) - start + 1)

    range_window.ReadWithDirectory(reader)("u", 600_000, 601_000)
    assert asked == [(600_000, 601_000)]
    range_window.ReadWithDirectory(reader)("u", 600_000, 600_999)
    assert asked[-1][0] < 600_000 and asked[-1][1] == 600_999
