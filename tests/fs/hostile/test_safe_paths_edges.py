"""The untrusted-name and bounded-read helpers at their edges: what each refusal says, the
exact size limit, a FIFO read without blocking, a link on either side of the root.

Found by mutation testing (scripts/maint/mutation.py, area fs): these are the cases its
survivors showed no test pinned down.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from gpuenv.fs import atomic_write as aw
from gpuenv.fs.safe_paths import (
    UnsafePathError,
    inside,
    is_md5,
    is_windows_device,
    open_regular,
    plain_name,
    read_bounded,
)


def test_an_empty_name_and_a_non_string_say_which() -> None:
    with pytest.raises(UnsafePathError, match=r"^field is empty$"):
        plain_name("", "field")
    with pytest.raises(UnsafePathError, match=r"^field is not a string$"):
        plain_name(3, "field")


def test_a_long_name_is_shown_cut_at_120_characters() -> None:
    short = "a" * 118 + "/"  # 119 characters: shown whole
    with pytest.raises(UnsafePathError) as whole:
        plain_name(short, "field")
    assert repr(short) in str(whole.value) and "..." not in str(whole.value)
    for length in (120, 130):  # shown as the first 120 characters and "..."
        name = "/" + "a" * (length - 1)
        with pytest.raises(UnsafePathError) as shown:
            plain_name(name, "field")
        message = str(shown.value)
        assert f"field {name[:120]!r}... " in message


@pytest.mark.parametrize(
    ("name", "device"),
    [
        *[("con", True), ("NUL.txt", True), ("com0", True), ("com9", True), ("lpt9", True)],
        *[("com10", False), ("lpt10", False), ("console", False)],
    ],
)
def test_windows_device_names(name: str, device: bool) -> None:
    # Microsoft, "Naming Files, Paths, and Namespaces": CON, PRN, AUX, NUL, COM0-COM9 and
    # LPT0-LPT9, also with an extension
    assert is_windows_device(name) is device


def test_md5_shape() -> None:
    assert is_md5("c" * 32) and is_md5("0123456789abcdef" * 2)
    assert not is_md5("c" * 31) and not is_md5("g" * 32) and not is_md5(None)


def test_a_missing_file_says_why(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="No such file or directory") as err:
        read_bounded(tmp_path / "absent", 10, "the file")
    assert "[Errno" not in str(err.value)  # the reason in words, not Python's repr


@pytest.mark.parametrize("side", ["a-before", "z-after"])
def test_a_link_is_refused_whichever_way_its_target_sorts(tmp_path: Path, side: str) -> None:
    root = tmp_path / "m-root"
    root.mkdir()
    elsewhere = tmp_path / side
    elsewhere.mkdir()
    (root / "sub").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="through a link"):
        inside(root, "file.txt", "field", "sub")


def test_the_size_limit_is_exact(tmp_path: Path) -> None:
    limit = 3 << 20
    path = tmp_path / "f"
    path.write_bytes(b"x" * limit)
    assert len(read_bounded(path, limit, "the file")) == limit
    path.write_bytes(b"x" * (limit + 1))
    with pytest.raises(UnsafePathError, match="larger than 3 MiB"):
        read_bounded(path, limit, "the file")


def _refusal(path: Path) -> str:
    """read_bounded's refusal, from a thread so that a blocking open fails the test."""
    out: list[str] = []

    def read() -> None:
        try:
            read_bounded(path, 1024, "the file")
        except UnsafePathError as exc:
            out.append(str(exc))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), f"read_bounded blocked on {path}"
    assert out, "not refused"
    return out[0]


def test_each_kind_of_non_file_is_named(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it for reading would block without O_NONBLOCK
    assert "a pipe (FIFO)" in _refusal(fifo)
    assert "a folder" in _refusal(tmp_path)
    assert "a device" in _refusal(Path(os.devnull))
    import socket

    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        message = _refusal(sock_path)
    assert "a socket" in message or "cannot read" in message  # opening a socket may fail first


@pytest.mark.skipif(os.geteuid() != 0, reason="making a block device needs root")
def test_a_block_device_is_never_replaced(tmp_path: Path) -> None:
    node = tmp_path / "blk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 200))
    with pytest.raises(aw.OutputPathError, match="is a device;"):
        aw.atomic_write_text(node, "x")
    assert stat.S_ISBLK(os.lstat(node).st_mode)


def test_an_output_in_new_folders_is_written(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.lock.yml"
    aw.atomic_write_text(target, "x\n")
    assert target.read_text() == "x\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.lock.yml"]


def test_an_output_below_a_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(aw.OutputWriteError, match="Not a directory"):
        aw.atomic_write_text(tmp_path / "file.txt" / "out.yml", "x")


def test_a_write_error_names_the_reason_in_words(tmp_path: Path) -> None:
    def full(staged: Path) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(aw.OutputWriteError) as err:
        aw.atomic_write(tmp_path / "out.yml", full)
    assert ": No space left on device; free some space" in str(err.value)
    assert "[Errno" not in str(err.value)
    assert err.value.reason == "No space left on device"  # the words alone, for other advice


def test_a_missing_own_file_is_not_called_a_link(tmp_path: Path) -> None:
    # follow_links=False (gpuenv's own state): only a link is "a symbolic link"
    with pytest.raises(UnsafePathError) as err:
        read_bounded(tmp_path / "absent", 10, "the record", follow_links=False)
    assert (
        str(err.value) == f"cannot read the record {tmp_path / 'absent'}: No such file or directory"
    )


def test_a_link_loop_read_through_links_is_a_read_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(UnsafePathError) as err:
        read_bounded(loop, 10, "the lockfile")
    assert str(err.value) == f"cannot read the lockfile {loop}: Too many levels of symbolic links"


def test_open_regular_reads_a_file_and_says_why_it_cannot(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"PK\x03\x04 wheel")
    with open_regular(wheel, "wheel") as fh:
        assert fh.read() == b"PK\x03\x04 wheel"
    with pytest.raises(UnsafePathError) as err:
        open_regular(tmp_path / "absent.whl", "wheel")
    assert str(err.value) == (
        f"cannot read wheel {tmp_path / 'absent.whl'}: No such file or directory"
    )
    with pytest.raises(UnsafePathError, match=r"^cannot read wheel .*null"):
        open_regular(Path(f"{tmp_path}/a\0b.whl"), "wheel")


def test_a_path_outside_the_root_is_refused_before_writing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    with pytest.raises(aw.OutputPathError, match="is not inside"):
        aw.atomic_write_text(tmp_path / "elsewhere" / "out.json", "{}", root=root)
    assert not (tmp_path / "elsewhere").exists()


def test_a_character_device_output_is_named_a_device_and_left_alone() -> None:
    with pytest.raises(aw.OutputPathError, match=rf"^{os.devnull} is a device;"):
        aw.atomic_write_text(Path(os.devnull), "x")
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)


def test_a_link_planted_after_the_check_is_still_named_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the by-name check sees no link (it was planted just after, or the system has no
    # O_NOFOLLOW check by name); the open with O_NOFOLLOW refuses it, and says what it is
    target = tmp_path / "elsewhere"
    target.write_text("not gpuenv's")
    planted = tmp_path / "record.json"
    planted.symlink_to(target)
    monkeypatch.setattr(os.path, "islink", lambda _path: False)
    with pytest.raises(UnsafePathError) as err:
        read_bounded(planted, 100, "the record", follow_links=False)
    assert str(err.value) == f"the record {planted} is a symbolic link; gpuenv does not follow it"
