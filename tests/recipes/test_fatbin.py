"""The fatbin reader: SASS and PTX architectures from a CUDA library's bytes, whole or streamed,
and clear errors on containers that do not hold together."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from fatbins import ELF, PTX, container, entry, library, nvcc_library
from gpuenv.recipes.fatbin import (
    MAGIC,
    MAX_ARCHITECTURES,
    MAX_CONTAINER,
    FatbinError,
    FatbinScanner,
    scan,
)


def test_sass_and_ptx_of_every_container() -> None:
    data = library(
        container(entry(ELF, 75, os.urandom(300)), entry(PTX, 75, b".version 9.0\n")),
        container(entry(ELF, 86, os.urandom(200), compressed=True), entry(PTX, 120, b"x" * 7)),
        container(entry(ELF, 103, b"")),
    )
    found = scan(data)
    assert found.sass == {"7.5", "8.6", "10.3"}
    assert found.ptx == {"7.5", "12.0"}
    assert found.containers == 3
    assert found.entries == 5
    # only the architectures that every compilation unit carries run the whole library
    assert found.in_every_container("sass") == set()
    two = scan(library(container(entry(ELF, 75), entry(PTX, 75)), container(entry(ELF, 75))))
    assert (two.in_every_container("sass"), two.in_every_container("ptx")) == ({"7.5"}, set())


@pytest.mark.parametrize("chunk", [1, 3, 17, 64, 4096])
def test_a_stream_in_any_chunks_reads_the_same(chunk: int) -> None:
    data = library(container(entry(ELF, 52, os.urandom(999)), entry(PTX, 52, b"p" * 33)))
    scanner = FatbinScanner()
    for i in range(0, len(data), chunk):
        scanner.feed(data[i : i + chunk])
    found = scanner.close()
    assert (found.sass, found.ptx, found.containers) == ({"5.2"}, {"5.2"}, 1)


def test_payload_bytes_are_not_read_as_containers() -> None:
    # an ELF payload that itself holds a container's bytes is skipped, not parsed
    inner = container(entry(PTX, 90, b"q"))
    found = scan(library(container(entry(ELF, 80, inner))))
    assert (found.sass, found.ptx) == ({"8.0"}, set())


def test_no_fatbin_is_an_empty_answer() -> None:
    found = scan(b"\x7fELF" + os.urandom(10_000))
    assert (found.sass, found.ptx, found.containers) == (set(), set(), 0)


def test_a_real_library_compiled_by_nvcc(tmp_path: Path) -> None:
    data = nvcc_library(
        tmp_path,
        ["arch=compute_75,code=[sm_75,compute_75]", "arch=compute_86,code=sm_86"],
    )
    if data is None:
        pytest.skip("nvcc is not installed")
    found = scan(data)
    # what the -gencode options asked nvcc for: SASS 7.5 and 8.6, PTX 7.5 only
    assert found.sass == {"7.5", "8.6"}
    assert found.ptx == {"7.5"}


def test_a_truncated_container_is_an_error() -> None:
    data = container(entry(ELF, 75, os.urandom(500)), entry(PTX, 75, b"x" * 100))
    with pytest.raises(FatbinError, match="truncated"):
        scan(b"\x7fELF" + data[:-40])


def test_an_entry_past_its_container_is_an_error() -> None:
    body = entry(ELF, 75, os.urandom(64))
    with pytest.raises(FatbinError, match="runs past the end of its container"):
        scan(container(body, declared=len(body) - 10) + os.urandom(100))


def test_a_container_ending_inside_an_entry_header_is_an_error() -> None:
    body = entry(ELF, 75, b"")
    with pytest.raises(FatbinError, match="ends inside an entry header"):
        scan(container(body, body[:20], declared=len(body) + 20) + os.urandom(100))


def test_a_huge_declared_size_is_refused_without_reading_it() -> None:
    with pytest.raises(FatbinError, match=f"more than {MAX_CONTAINER}"):
        scan(container(entry(ELF, 75, b"z"), declared=2**63))


def test_distinct_architectures_are_bounded() -> None:
    # hostile round four: every entry a new architecture grew the sets and counts without end
    many = container(*[entry(ELF, arch) for arch in range(1, MAX_ARCHITECTURES + 2)])
    with pytest.raises(FatbinError, match="bound on fatbin architectures"):
        scan(many)
    scan(container(*[entry(ELF, arch) for arch in range(1, MAX_ARCHITECTURES + 1)]))


def test_containers_and_entries_are_bounded_per_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuenv.recipes.fatbin as fatbin

    monkeypatch.setattr(fatbin, "MAX_RECORDS", 10)
    shared = fatbin.Limits()  # one wheel's libraries share the count
    FatbinScanner("a.so", shared).feed(container(*[entry(ELF, 70)] * 4))  # 5 records
    scanner = FatbinScanner("b.so", shared)
    with pytest.raises(FatbinError, match="more than 10 fatbin containers and entries"):
        scanner.feed(container(*[entry(ELF, 70)] * 5))  # 6 more
    assert len(scanner.found) <= 10  # the entries kept are one container's, at most


def test_magic_numbers_that_start_no_container_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuenv.recipes.fatbin as fatbin

    monkeypatch.setattr(fatbin, "MAX_FALSE_MAGICS", 100)
    flood = struct.pack("<I", MAGIC) * 1000
    with pytest.raises(FatbinError, match="more than 100 fatbin magic numbers"):
        scan(flood)
    assert scan(struct.pack("<I", MAGIC) * 50).containers == 0  # a few are nothing
