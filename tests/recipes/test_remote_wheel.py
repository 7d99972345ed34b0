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
