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
