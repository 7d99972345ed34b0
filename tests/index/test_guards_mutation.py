"""The index readers at the edges no other test reaches (index's mutation survivors,
benchmarks/mutation/index.md): a wheel's central directory at exactly its size bound, a ZIP64
wheel read through its locator, a ZIP64 extra field longer than it needs to be, a range that
asks for no byte more than it needs, a body handed on as it arrives, a RECORD of exactly its
line bound, overlapping pairs past eight counted, and a page look-up's default wait."""

from __future__ import annotations

import http.server
import struct
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gpuenv.index import bounded_http, simple
from gpuenv.index.remote_wheel import (
    Budget,
    WheelReadError,
    central_directory,
    members,
    read_member,
    stream_range,
)
from gpuenv.index.wheel_records import (
    LockedWheel,
    WheelOverlapError,
    WheelRecordError,
    parse_record,
    refuse_overlaps,
)
from loopback import loopback

_EOCD = struct.Struct("<4sHHHHIIH")  # signature, disks, entries, size, offset, comment length


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    with loopback(handler) as url:
        yield url


def _eocd(size: int, offset: int, entries: int = 1) -> bytes:
    return _EOCD.pack(b"PK\x05\x06", 0, 0, entries, entries, size, offset, 0)


# -- remote_wheel --------------------------------------------------------------------------------


def test_a_central_directory_of_exactly_64_mib_is_not_too_large(tmp_path: Path) -> None:
    """The bound is 64 MiB: a directory that size is read (here the file is far shorter, so
    it is cut short); one byte more is refused before anything is read."""
    wheel = tmp_path / "w-1-py3-none-any.whl"
    wheel.write_bytes(b"\0" * 100 + _eocd(64 * 1024 * 1024, 0))
    with pytest.raises(WheelReadError, match="cut short"):
        central_directory(wheel.as_uri())
    wheel.write_bytes(b"\0" * 100 + _eocd(64 * 1024 * 1024 + 1, 0))
    with pytest.raises(WheelReadError, match="too large"):
        central_directory(wheel.as_uri())


def _as_zip64(plain: bytes) -> bytes:
    """The same zip with its end records in ZIP64 form: a ZIP64 end of central directory and
    its locator before an end record that marks the size and offset 0xFFFFFFFF."""
    at = plain.rfind(b"PK\x05\x06")
    _, _, _, _, entries, size, offset, _ = _EOCD.unpack(plain[at : at + 22])
    record = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, size, offset
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, at, 1)
    return plain[:at] + record + locator + _eocd(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFF)


def test_a_zip64_wheel_is_read_through_its_locator(tmp_path: Path) -> None:
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr("pkg/__init__.py", "")
        zf.writestr("pkg/version.py", "version = '1.0'\n")
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(_as_zip64(plain.read_bytes()))
    with zipfile.ZipFile(wheel) as zf:  # the standard library reads it as ZIP64 too
        assert zf.read("pkg/version.py") == b"version = '1.0'\n"
    assert read_member(wheel.as_uri(), "pkg/version.py") == b"version = '1.0'\n"
    # a locator cut short (its record's offset gone): refused, not misread
    data = wheel.read_bytes()
    cut = data.rfind(b"PK\x06\x07")
    wheel.write_bytes(data[: cut + 10] + _eocd(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFF))
    with pytest.raises(WheelReadError, match="ZIP64"):
        central_directory(wheel.as_uri())


def _central_entry(name: bytes, extra: bytes, *, compressed: int, size: int, offset: int) -> bytes:
    head = struct.pack(
        "<4sHHHHHHIIIHHHHHII",
        b"PK\x01\x02",
        45,
        45,
        0,
        8,
        0,
        0,
        0,
        compressed,
        size,
        len(name),
        len(extra),
        0,
        0,
        0,
        0,
        offset,
    )
    return head + name + extra


def test_a_zip64_extra_field_longer_than_its_entry_needs_is_read() -> None:
    """Only the values the entry marks are taken from the field (in order): a field that
    holds more (here 300 bytes) is read all the same; one that holds less than it declares
    is refused."""
    mark = 0xFFFFFFFF
    values = struct.pack("<QQQ", 5 << 32, 3 << 32, 7 << 32)
    body = values + b"\0" * (300 - len(values))
    extra = struct.pack("<HH", 1, len(body)) + body
    entry = _central_entry(b"big.bin", extra, compressed=mark, size=mark, offset=mark)
    [(name, member)] = list(members(entry))
    assert name == "big.bin"
    assert (member.size, member.compressed, member.offset) == (5 << 32, 3 << 32, 7 << 32)
    short = struct.pack("<HH", 1, 300) + values  # declares 300 bytes, holds 24
    entry = _central_entry(b"big.bin", short, compressed=mark, size=mark, offset=mark)
    with pytest.raises(WheelReadError, match="declares 300 bytes and holds 24"):
        list(members(entry))


def test_a_range_is_charged_for_the_bytes_asked_and_no_more(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    budget = Budget(60, 1 << 30)
    assert b"".join(stream_range(path.as_uri(), 100, 50, budget)) == data[100:150]
    assert budget.fetched == 50
    asked: list[str] = []

    class Ranges(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            spec = self.headers["Range"]
            asked.append(spec)
            first, last = (int(x) for x in spec.removeprefix("bytes=").split("-"))
            body = data[first : last + 1]
            self.send_response(206)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Ranges) as base:
        budget = Budget(60, 1 << 30)
        assert b"".join(stream_range(base + "f.bin", 1000, 24, budget)) == data[1000:1024]
    assert asked == ["bytes=1000-1023"]
    assert budget.fetched == 24


def test_a_body_is_handed_on_as_it_arrives(tmp_path: Path) -> None:
    """The first bytes reach the caller while the server still holds the rest (a slow
    server's body is read as it comes: each chunk, not a full one, is handed over)."""
    got_first = threading.Event()
    waited: list[bool] = []

    class Dripping(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "200")
            self.end_headers()
            self.wfile.write(b"a" * 100)
            self.wfile.flush()
            waited.append(got_first.wait(5))  # the rest only once the caller has the first
            self.wfile.write(b"b" * 100)

    with serving(Dripping) as base:
        started = time.monotonic()
        with bounded_http.get(base, {}, deadline=started + 30, timeout=30) as answer:
            chunks = answer.chunks()
            first = next(chunks)
            got_first.set()
            body = first + b"".join(chunks)
    assert body == b"a" * 100 + b"b" * 100
    assert first == b"a" * 100
    assert waited == [True]


# -- wheel_records -------------------------------------------------------------------------------


def test_a_record_of_exactly_200_000_lines_is_read() -> None:
    lines = "".join(f"p/{i}.py,sha256=x,1\n" for i in range(200_000))
    assert len(parse_record(lines.encode(), "w")) == 200_000
    with pytest.raises(WheelRecordError, match="more than 200000"):
        parse_record((lines + "p/last.py,sha256=x,1\n").encode(), "w")


def test_overlapping_pairs_past_eight_are_counted(tmp_path: Path) -> None:
    """Eleven wheels that all write one library: the first clashes with each of the ten
    others; eight pairs are named and the other two counted."""

    def reader(url: str) -> bytes:
        return f"lib/libx.so,sha256={url.rsplit('/', 1)[-1]},1\n".encode()

    def wheels(n: int) -> list[LockedWheel]:
        return [
            LockedWheel(f"w{i:02}-1-py3-none-any.whl", f"https://x.example/{i}", f"{i:064x}")
            for i in range(n)
        ]

    with pytest.raises(WheelOverlapError) as err:
        refuse_overlaps(wheels(11), "the lock", reader)
    text = str(err.value)
    assert "... and 2 more pairs" in text
    assert sum(f"w{i:02}-1" in text for i in range(1, 11)) == 8
    with pytest.raises(WheelOverlapError) as err:
        refuse_overlaps(wheels(9), "the lock", reader)
    assert "more pairs" not in str(err.value)
    assert all(f"w{i:02}-1" in str(err.value) for i in range(9))


# -- simple --------------------------------------------------------------------------------------


def test_a_page_look_up_waits_30_seconds_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    def listing(index_url: str, project: str, timeout: float) -> dict[str, tuple[str, None]]:
        waits.append(timeout)
        return {"jax-1.0-py3-none-any.whl": ("https://x.example/jax-1.0-py3-none-any.whl", None)}

    monkeypatch.setattr(simple, "project_listing", listing)
    assert simple.fetch_filenames("https://x.example/simple/", "jax") == [
        "jax-1.0-py3-none-any.whl"
    ]
    assert waits == [30.0]


def test_a_member_whose_directory_lies_about_its_size_is_refused_as_a_bomb(
    tmp_path: Path,
) -> None:
    """The central directory says 100 bytes; the data inflates past 16 MiB: inflating stops
    one byte past the bound and says so (not a mere 'truncated')."""
    wheel = tmp_path / "bomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb/version.py", b"\0" * (16 * 1024 * 1024 + 1024))
    data = bytearray(wheel.read_bytes())
    at = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, at + 24, 100)  # the directory's uncompressed size
    wheel.write_bytes(bytes(data))
    with pytest.raises(WheelReadError, match="inflates beyond 16777216 bytes"):
        read_member(wheel.as_uri(), "bomb/version.py")


def test_a_central_directory_of_50_000_members_is_read_and_one_more_is_refused() -> None:
    """torch's wheels list about 15,000 files; the bound is 50,000 members."""
    from gpuenv.index.remote_wheel import BoundExceeded

    entry = _central_entry(b"a", b"", compressed=0, size=0, offset=0)
    directory = entry * 50_000
    assert sum(1 for _ in members(directory)) == 50_000
    with pytest.raises(BoundExceeded, match="more than 50000 members"):
        sum(1 for _ in members(directory + entry))


# -- config ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "https://pypi.example/sim ple/",
        "https://pypi.example/simple/\x01",
        "https://pypi.example/\x1bsimple/",
        "https://pypi.example/simple/\x7f",
        "https://pypi.example/\u2003simple/",
        "/srv/wheel\thouse",
    ],
    ids=["space", "soh", "escape", "del", "em-space", "tab"],
)
def test_a_location_with_a_space_or_a_control_character_is_refused(value: str) -> None:
    from gpuenv.index.config import IndexConfigError, checked_location

    with pytest.raises(IndexConfigError, match="holds a space or a control character"):
        checked_location(value, "PIP_INDEX_URL")
    assert checked_location("https://pypi.example/simple/", "PIP_INDEX_URL")


def test_a_wheel_with_a_long_zip_comment_is_still_found(tmp_path: Path) -> None:
    """The end record may sit up to 64 KiB + 22 bytes from the end (a comment before it):
    a 65,500-byte comment is read past, as the format allows."""
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/version.py", "version = '1.0'\n")
        zf.comment = b"c" * 65_500
    assert read_member(wheel.as_uri(), "pkg/version.py") == b"version = '1.0'\n"


@pytest.mark.skipif(sys.platform == "win32", reason="a drive letter is a path on Windows")
@pytest.mark.parametrize("value", ["C:\\wheels", "x:/wheels"])
def test_a_drive_letter_off_windows_is_a_url_scheme_gpuenv_does_not_read(value: str) -> None:
    from gpuenv.index.config import IndexConfigError, checked_location

    scheme = value[0].lower()
    with pytest.raises(IndexConfigError, match=f"is a {scheme}: URL; gpuenv reads indexes"):
        checked_location(value, "PIP_FIND_LINKS")


def test_members_after_one_with_a_comment_are_found(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        first = zipfile.ZipInfo("pkg/__init__.py")
        first.comment = b"a comment of the first member"
        zf.writestr(first, "")
        zf.writestr("pkg/version.py", "version = '1.0'\n")
    names = [name for name, _ in members(central_directory(wheel.as_uri()))]
    assert names == ["pkg/__init__.py", "pkg/version.py"]
    assert read_member(wheel.as_uri(), "pkg/version.py") == b"version = '1.0'\n"


def test_a_range_deep_in_a_file_from_a_server_that_ignores_ranges(tmp_path: Path) -> None:
    """The server sends the whole file (200): the reader passes over everything before the
    range, however many chunks that takes, and keeps only the bytes asked for."""
    data = bytes(range(256)) * (3 * 4096 + 7)  # a little over 3 MiB

    class Whole(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for at in range(0, len(data), 64 * 1024):  # in pieces, as a network delivers them
                self.wfile.write(data[at : at + 64 * 1024])
                self.wfile.flush()

    start = 2 * 1024 * 1024 + 5
    with serving(Whole) as base:
        budget = Budget(60, 1 << 30)
        got = b"".join(stream_range(base + "f.bin", start, 1000, budget))
    assert got == data[start : start + 1000]


def test_a_zip64_end_record_with_another_signature_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr("pkg/version.py", "version = '1.0'\n")
    data = bytearray(_as_zip64(plain.read_bytes()))
    at = data.rfind(b"PK\x06\x06")
    for signature in (b"PK\x07\x07", b"PK\x05\x05"):  # sorting after it, and before it
        data[at : at + 4] = signature
        wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
        wheel.write_bytes(bytes(data))
        with pytest.raises(WheelReadError, match="broken ZIP64 end of central directory"):
            central_directory(wheel.as_uri())


def test_a_local_index_page_s_sha256s_are_keyed_by_file_name(tmp_path: Path) -> None:
    from gpuenv.index.simple import file_sha256s

    page = tmp_path / "simple" / "jax" / "index.html"
    page.parent.mkdir(parents=True)
    sha = "ab" * 32
    page.write_text(
        f'<a href="../../files/jax-0.4.30-py3-none-any.whl#sha256={sha.upper()}">x</a>\n'
        f'<a href="jax%2B-0.4.31-py3-none-any.whl#sha256={sha}">y</a>\n',
        encoding="utf-8",
    )
    assert file_sha256s((tmp_path / "simple").as_uri(), "jax") == {
        "jax-0.4.30-py3-none-any.whl": sha,
        "jax+-0.4.31-py3-none-any.whl": sha,
    }


@pytest.mark.parametrize("url", ["http://[::1/simple/", "https://[bad/x"])
def test_a_url_that_cannot_be_split_carries_no_credentials(url: str) -> None:
    from gpuenv.index.origin import has_credentials

    assert has_credentials(url) is False
    assert has_credentials("https://alice:pw@pypi.example/simple/") is True
