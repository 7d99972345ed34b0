"""Output files (`lock -o`, pylock) replace only a regular file or a new path, atomically; a full
disk or a read-only folder is one message with exit 1 and leaves no temporary file behind."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from gpuenv.errors import FAILURE_EXIT, USAGE_EXIT, exit_code
from gpuenv.fs import atomic_write as aw
from gpuenv.lock.load import load_locked
from installrepos import jax_plan
from lockdata import in_process, write_valid


def _write(text: str) -> Any:
    def write(staged: Path) -> None:
        staged.write_text(text)

    return write


def test_a_new_path_and_a_regular_file_are_written(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.yml"
    aw.atomic_write(target, _write("one"))
    aw.atomic_write(target, _write("two"))
    assert target.read_text() == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.yml"]


def test_a_symlink_is_refused_and_left_alone(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    link = tmp_path / "out.yml"
    link.symlink_to(precious)
    with pytest.raises(aw.OutputPathError) as err:
        aw.atomic_write(link, _write("x"))
    assert exit_code(err.value) == USAGE_EXIT
    assert "symbolic link" in str(err.value) and str(precious) in str(err.value)
    assert link.is_symlink() and precious.read_text() == "keep"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "out.yml"
    os.mkfifo(fifo)
    with pytest.raises(aw.OutputPathError, match="pipe"):
        aw.atomic_write(fifo, _write("x"))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(aw.OutputPathError, match="a folder"):
        aw.atomic_write(tmp_path, _write("x"))


def test_dev_null_is_refused_before_anything_is_written() -> None:
    with pytest.raises(aw.OutputPathError, match="a device"):
        aw.check_output_path(Path("/dev/null"))  # only looked at: never written in a test


def _device(tmp_path: Path) -> Path:
    """A character device like /dev/null, made in tmp (needs root; skipped otherwise)."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return node


def test_a_device_is_never_replaced(tmp_path: Path) -> None:
    node = _device(tmp_path)
    with pytest.raises(aw.OutputPathError, match="a device"):
        aw.atomic_write(node, _write("x"))
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def _plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(jax_plan().to_json()))
    return path


def test_lock_onto_a_device_or_a_link_exits_2_before_locking(tmp_path: Path) -> None:
    precious = tmp_path / "precious.yml"
    precious.write_text("keep")
    link = tmp_path / "link.yml"
    link.symlink_to(precious)
    for target in (link, _device(tmp_path)):
        code, out, err = in_process("lock", "--plan", str(_plan_file(tmp_path)), "-o", str(target))
        assert code == 2, (out, err)
        assert str(target) in err and "never replaces a device or a link" in err
    assert precious.read_text() == "keep" and link.is_symlink()


@pytest.mark.parametrize(
    "errno_,words",
    [(errno.ENOSPC, "free some space"), (errno.EROFS, "not writable")],
    ids=["full-disk", "read-only"],
)
def test_a_failed_write_is_exit_1_with_the_path_and_no_leftovers(
    errno_: int, words: str, tmp_path: Path
) -> None:
    target = tmp_path / "out.yml"
    target.write_text("old")

    def write(staged: Path) -> None:
        staged.write_text("half")
        raise OSError(errno_, os.strerror(errno_))

    with pytest.raises(aw.OutputWriteError) as err:
        aw.atomic_write(target, write)
    assert exit_code(err.value) == FAILURE_EXIT
    assert str(target) in str(err.value) and words in str(err.value)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yml"]


def test_a_read_only_folder_is_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # root ignores permission bits, so the kernel's answer for a read-only mount is simulated
    def refuse(*args: Any, **kwargs: Any) -> str:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("tempfile.mkdtemp", refuse)
    with pytest.raises(aw.OutputWriteError, match="not writable"):
        aw.atomic_write(tmp_path / "out.yml", _write("x"))
    assert list(tmp_path.iterdir()) == []


def test_lockfile_written_through_conda_lock_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real writer: os.replace fails as on a full disk; the old lockfile stays whole."""
    target = write_valid(tmp_path / "gpuenv.lock.yml")
    before = target.read_bytes()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(aw.os, "replace", full)
    with pytest.raises(aw.OutputWriteError, match="No space left"):
        write_valid(target, conda=True)
    assert target.read_bytes() == before
    assert load_locked(target).conda == ()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpuenv.lock.yml"]
