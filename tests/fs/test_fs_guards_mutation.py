"""fs/ where its own tests did not look (fs' mutation survivors, benchmarks/mutation/fs.md):
what a write error says after its fix, and a file whose hash cannot be read."""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

import pytest

from gpuenv.fs.disk_errors import disk_advice
from gpuenv.fs.file_hash import file_sha256


def test_a_disk_error_says_what_was_left_unchanged_after_its_fix() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    plain = disk_advice("/x/out.yml", full, elsewhere="write elsewhere with -o")
    assert plain == (
        "cannot write /x/out.yml: No space left on device; free some space on the disk that"
        " holds it, or write elsewhere with -o."
    )
    told = disk_advice(
        "/x/out.yml", full, elsewhere="write elsewhere with -o", outcome="The old file is kept."
    )
    assert told == plain + " The old file is kept."


def test_a_file_that_cannot_be_read_has_no_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file whose read fails (EIO, a permission the check could not see): no hash,
    as for a missing one, not a crash."""
    path = tmp_path / "out.yml"
    path.write_text("x\n")
    assert file_sha256(path) == hashlib.sha256(b"x\n").hexdigest()
    real_open = Path.open

    def failing_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self == path:
            raise OSError(errno.EIO, "Input/output error")
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", failing_open)
    assert file_sha256(path) is None
    assert file_sha256(tmp_path / "absent.yml") is None


def test_a_shown_value_is_cut_at_40_characters() -> None:
    """The documented cut: a value's repr of up to 40 characters is quoted whole, a longer
    one is cut to 37 and '...'."""
    from gpuenv.fs.type_names import type_name

    whole = "x" * 38  # repr: 40 characters with its quotes
    assert type_name(whole, show=True) == f"a string ('{whole}')"
    cut = type_name("y" * 39, show=True)  # repr: 41 characters
    assert cut == "a string ('" + "y" * 36 + "...)"


def test_a_private_file_that_grew_past_its_limit_after_the_check_is_refused_not_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its size was within the limit when checked (fstat), and it holds more by the time it is
    read: one byte past the limit is read to tell, and the file is refused. The limit here is
    a whole number of read chunks (1 MiB), so that byte takes a read of its own."""
    import os
    import stat

    import gpuenv.fs.private_read as private_read

    limit = 1 << 20
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    (folder / "entry").write_bytes(b"z" * (limit + 5))
    (folder / "entry").chmod(0o600)
    data, why = private_read.read_private(folder, "entry", limit)
    assert data is None and why.endswith(f"is larger than {limit} bytes")  # seen by fstat
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return info
        fields = list(info)
        fields[stat.ST_SIZE] = limit  # as it was when checked
        return os.stat_result(fields)

    monkeypatch.setattr(private_read.os, "fstat", fstat)
    data, why = private_read.read_private(folder, "entry", limit)
    assert data is None and why.endswith(f"is larger than {limit} bytes")  # seen by reading
    (folder / "entry").write_bytes(b"z" * limit)
    assert private_read.read_private(folder, "entry", limit) == (b"z" * limit, "ok")


def test_a_work_folder_removed_inside_its_block_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from gpuenv.fs.workdir import private_workdir

    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    with private_workdir("lock") as path:
        assert path.is_dir()
        shutil.rmtree(path)
    assert not path.exists()
