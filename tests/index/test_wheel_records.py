"""Two wheels of one environment must not write one file with different content: read from
each wheel's RECORD (range requests or seeks), cached by sha256, hostile RECORDs refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from gpuenv.index.wheel_records import (
    MAX_RECORD_LINES,
    LockedWheel,
    WheelOverlapError,
    WheelRecordError,
    installed_path,
    overlaps,
    parse_record,
    record_of,
    records,
    refuse_overlaps,
)
from isolation import isolate
from localrepos import build_wheel, sha256_file

SO9 = "nvidia/cudnn/lib/libcudnn.so.9"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch, gpuenv_root=tmp_path / "cache", uv_cache=tmp_path / "uv-cache")


def _locked(wheel: Path) -> LockedWheel:
    return LockedWheel(wheel.name, wheel.as_uri(), sha256_file(wheel))


def _nvidia(tmp_path: Path, name: str, so: str) -> LockedWheel:
    files = {"nvidia/__init__.py": "", SO9: so, f"nvidia/cudnn/{name}.txt": name}
    return _locked(build_wheel(tmp_path / name, name, "9.1.0", files=files))


def test_two_cudnn_builds_on_one_path_are_refused_naming_both(tmp_path: Path) -> None:
    cu12 = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn 9.5 for CUDA 12")
    cu13 = _nvidia(tmp_path, "nvidia-cudnn-cu13", "cudnn 9.26 for CUDA 13")
    with pytest.raises(WheelOverlapError) as caught:
        refuse_overlaps([cu13, cu12], "the lock")
    text = str(caught.value)
    assert cu12.filename in text and cu13.filename in text and SO9 in text
    assert caught.value.exit_code == 1
    assert "nvidia/__init__.py" not in text  # the same empty file in both is harmless


def test_identical_shared_files_are_no_overlap(tmp_path: Path) -> None:
    a = _nvidia(tmp_path, "nvidia-cudnn-cu12", "same bytes")
    b = _locked(
        build_wheel(tmp_path / "b", "nvidia-cublas-cu12", "1", files={"nvidia/__init__.py": ""})
    )
    assert refuse_overlaps([a, b], "the lock") == []


def test_data_scheme_paths_land_where_the_installer_puts_them(tmp_path: Path) -> None:
    a = _locked(build_wheel(tmp_path / "a", "aa", "1", files={"aa-1.data/purelib/x/y.py": "1"}))
    b = _locked(build_wheel(tmp_path / "b", "bb", "1", files={"x/y.py": "2"}))
    (found,) = overlaps(records([a, b])[0])
    assert found.path == "x/y.py"
    assert installed_path("aa-1.data/scripts/tool", "w") == "scripts:tool"
    assert installed_path("aa-1.dist-info/METADATA", "w") is None


@pytest.mark.parametrize(
    "path",
    ["../../etc/passwd", "/etc/passwd", "x/../../y", "a\\b", "C:evil", "a\x00b", "..", ""],
)
def test_a_record_path_outside_the_environment_is_refused(path: str) -> None:
    with pytest.raises(WheelRecordError, match="outside the environment"):
        installed_path(path, "evil-1-py3-none-any.whl")


def test_a_huge_or_undecodable_record_is_refused() -> None:
    lines = "".join(f"p/{i}.py,sha256=x,1\n" for i in range(MAX_RECORD_LINES + 1))
    with pytest.raises(WheelRecordError, match="more than"):
        parse_record(lines.encode(), "w")
    with pytest.raises(WheelRecordError, match="UTF-8"):
        parse_record(b"\xff\xfe", "w")


def test_a_wheel_without_a_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bare-1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bare/__init__.py", "")
    with pytest.raises(WheelRecordError, match=r"no \.dist-info/RECORD"):
        record_of(_locked(path))


def test_records_are_cached_by_sha256_and_a_bad_cache_entry_is_read_again(tmp_path: Path) -> None:
    wheel = _nvidia(tmp_path, "nvidia-cudnn-cu12", "x")
    calls: list[str] = []

    def counting(url: str) -> bytes | None:
        from gpuenv.index.remote_wheel import read_record

        calls.append(url)
        return read_record(url)

    first = record_of(wheel, counting)
    assert record_of(wheel, counting) == first and len(calls) == 1
    from gpuenv.cache import cache_dir

    (cache_dir() / "wheel-records" / f"{wheel.sha256}.json").write_text("[1, 2]")
    assert record_of(wheel, counting) == first and len(calls) == 2


def test_an_unreadable_wheel_is_a_note_not_a_silent_pass(tmp_path: Path) -> None:
    gone = LockedWheel("gone-1-py3-none-any.whl", (tmp_path / "gone.whl").as_uri(), "ab" * 32)
    notes = refuse_overlaps([gone], "the lock")
    assert len(notes) == 1 and "gone-1-py3-none-any.whl" in notes[0] and "not checked" in notes[0]


def test_two_dist_info_records_make_no_valid_wheel(tmp_path: Path) -> None:
    path = tmp_path / "two-1-py3-none-any.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a-1.dist-info/RECORD", "a,,\n")
        zf.writestr("b-1.dist-info/RECORD", "b,,\n")
    path.write_bytes(buf.getvalue())
    notes = refuse_overlaps([_locked(path)], "the lock")
    assert notes and "more than one" in notes[0]


@pytest.mark.parametrize(
    ("tag", "platforms"),
    [
        ("manylinux_2_28_x86_64", ("linux-64",)),
        ("manylinux2014_aarch64", ("linux-aarch64",)),
        ("linux_x86_64", ("linux-64",)),
        ("musllinux_1_2_x86_64", ()),  # not a glibc Linux: gpuenv does not plan for it
        ("macosx_10_15_x86_64", ("osx-64",)),
        ("macosx_11_0_arm64", ("osx-arm64",)),
        ("macosx_10_9_universal2", ("osx-64", "osx-arm64")),
        ("win_amd64", ("win-64",)),
        ("win32", ()),
    ],
)
def test_a_wheel_platform_tag_names_its_conda_platforms(
    tag: str, platforms: tuple[str, ...]
) -> None:
    from gpuenv.index.wheel_platforms import platform_of

    assert platform_of(tag) == platforms


@pytest.mark.parametrize(
    ("filename", "project"),
    [
        ("torch-2.6.0-cp312-cp312-manylinux_2_28_x86_64.whl", "torch"),
        ("Jax_Lib-0.4.30.tar.gz", "jax-lib"),
        ("nvidia_cudnn_cu12-9.1.0.70.zip", "nvidia-cudnn-cu12"),
        ("README.txt", None),
    ],
)
def test_a_file_name_names_its_project(filename: str, project: str | None) -> None:
    from gpuenv.index.simple import project_of

    assert project_of(filename) == project


def _counting_reader(log: list[str]):  # type: ignore[no-untyped-def]
    from gpuenv.index.remote_wheel import read_record

    def reader(url: str) -> bytes | None:
        log.append(url)
        return read_record(url)

    return reader


def _forget_records() -> None:
    """Remove the per-wheel RECORD cache, keeping the sets found clean."""
    from gpuenv.cache import cache_dir
    from gpuenv.index.wheel_records import CACHE_KIND

    for entry in (cache_dir() / CACHE_KIND).glob("*.json"):
        entry.unlink()


def test_a_set_found_clean_is_not_read_again(tmp_path: Path) -> None:
    a = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn")
    b = _locked(build_wheel(tmp_path / "b", "nvidia-cublas-cu12", "1", files={"x/b.py": ""}))
    c = _locked(build_wheel(tmp_path / "c", "other", "1", files={"x/c.py": ""}))
    log: list[str] = []
    assert refuse_overlaps([a, b], "the lock", _counting_reader(log)) == []
    assert len(log) == 2
    _forget_records()
    assert refuse_overlaps([b, a], "the lock", _counting_reader(log)) == []  # any order
    assert len(log) == 2  # nothing read: the set is known clean
    assert refuse_overlaps([a, b, c], "the lock", _counting_reader(log)) == []
    assert len(log) == 5  # another set: every RECORD read


def test_a_set_with_an_unread_wheel_is_not_kept_clean(tmp_path: Path) -> None:
    a = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn")
    gone = LockedWheel("gone-1-py3-none-any.whl", (tmp_path / "gone.whl").as_uri(), "0" * 64)
    log: list[str] = []
    notes = refuse_overlaps([a, gone], "the lock", _counting_reader(log))
    assert len(notes) == 1 and "gone-1" in notes[0]
    assert refuse_overlaps([a, gone], "the lock", _counting_reader(log)) == notes  # asked again
    assert log.count(gone.url) == 2


def test_an_overlapping_set_is_refused_every_time(tmp_path: Path) -> None:
    cu12 = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn 9.5 for CUDA 12")
    cu13 = _nvidia(tmp_path, "nvidia-cudnn-cu13", "cudnn 9.26 for CUDA 13")
    for _ in range(2):
        with pytest.raises(WheelOverlapError):
            refuse_overlaps([cu12, cu13], "the lock")


@pytest.mark.parametrize(
    ("content", "mode"),
    [(b"no two of these wheels write one path\n", 0o622), (b"clean\n", 0o600), (b"", 0o600)],
    ids=["others-can-write", "other-text", "empty"],
)
def test_a_planted_clean_mark_is_not_believed(tmp_path: Path, content: bytes, mode: int) -> None:
    """The mark says "checked": only gpuenv's own words, in the user's own file, count."""
    import os

    from gpuenv.cache import kind_dir
    from gpuenv.index.wheel_records import CACHE_KIND, _set_key

    cu12 = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn 9.5 for CUDA 12")
    cu13 = _nvidia(tmp_path, "nvidia-cudnn-cu13", "cudnn 9.26 for CUDA 13")
    key = _set_key([cu12, cu13])
    assert key is not None
    mark = kind_dir(CACHE_KIND) / f"set-{key}"
    mark.write_bytes(content)
    os.chmod(mark, mode)
    with pytest.raises(WheelOverlapError):
        refuse_overlaps([cu12, cu13], "the lock")


def test_a_wheel_without_a_sha256_makes_no_set(tmp_path: Path) -> None:
    from gpuenv.index.wheel_records import _set_key

    a = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn")
    assert _set_key([a, LockedWheel("b-1-py3-none-any.whl", "file:///b", "")]) is None
    assert _set_key([]) is None
    assert _set_key([a]) == _set_key([a, a])


def test_a_cache_that_cannot_be_written_never_fails_the_check(tmp_path: Path) -> None:
    """A full disk or a planted file where the cache's folder goes: the check still answers,
    and reads the RECORDs again next time (no clean mark was kept)."""
    from gpuenv.cache import cache_dir
    from gpuenv.index.wheel_records import CACHE_KIND

    a = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn")
    b = _locked(build_wheel(tmp_path / "b", "other", "1", files={"x/b.py": ""}))
    cache_dir().mkdir(parents=True, exist_ok=True)
    (cache_dir() / CACHE_KIND).write_text("not a folder")
    log: list[str] = []
    for _ in range(2):
        assert refuse_overlaps([a, b], "the lock", _counting_reader(log)) == []
    assert len(log) == 4


def test_a_cache_entry_a_power_loss_cut_short_is_read_again(tmp_path: Path) -> None:
    """The entries are not flushed to disk before their rename (the lock waits for them): what a
    power loss can leave, a prefix or a tail of zeros, must never read as a record."""
    from gpuenv.cache import cache_dir

    wheel = _nvidia(tmp_path, "nvidia-cudnn-cu12", "x")
    first = record_of(wheel)
    entry = cache_dir() / "wheel-records" / f"{wheel.sha256}.json"
    whole = entry.read_bytes()
    calls: list[str] = []

    def counting(url: str) -> bytes | None:
        from gpuenv.index.remote_wheel import read_record

        calls.append(url)
        return read_record(url)

    torn = [whole[:cut] for cut in range(len(whole))]
    torn += [whole[:cut] + b"\0" * (len(whole) - cut) for cut in range(0, len(whole), 7)]
    for content in torn:
        entry.write_bytes(content)
        assert record_of(wheel, counting) == first
    assert len(calls) == len(torn)  # each torn entry was read again, none believed


def test_the_cache_is_written_without_waiting_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from gpuenv.cache import kind_dir
    from gpuenv.fs.atomic_write import atomic_write_bytes
    from gpuenv.index.wheel_records import CACHE_KIND

    kind_dir(CACHE_KIND)  # the cache made and tagged, once for all its entries (flushed)
    flushed: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (flushed.append(fd), real(fd))[1])
    cu12 = _nvidia(tmp_path, "nvidia-cudnn-cu12", "cudnn 9.5 for CUDA 12")
    other = _locked(build_wheel(tmp_path / "o", "other", "1.0", files={"other/x.py": ""}))
    assert refuse_overlaps([cu12, other], "the lock") == []  # two records and the clean set
    assert flushed == []
    atomic_write_bytes(tmp_path / "lockfile", b"pins\n")  # an output file still is flushed
    assert len(flushed) == 1
