"""The dataclass code cache: the same classes as without it, and only the user's own cache is read."""

from __future__ import annotations

import marshal
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuenv import dataclass_code

RECORD_SOURCE = """
from dataclasses import dataclass, field
from typing import Optional

@dataclass(frozen=True)
class Record:
    name: str
    sizes: tuple[int, ...] = ()
    note: Optional[str] = None
    extra: tuple[str, ...] = field(default_factory=tuple)
"""


@pytest.fixture
def code_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(dataclass_code, "_compiled", {})
    monkeypatch.setattr(dataclass_code, "_added", False)
    yield tmp_path / "cache" / dataclass_code.KIND / dataclass_code.entry_name("any")
    dataclass_code.uninstall()


def _record_class() -> Any:
    """The record class defined afresh, in a module of its own (as gpuenv's records are)."""
    module = types.ModuleType("records_under_test")
    sys.modules[module.__name__] = module
    try:
        exec(
            compile(RECORD_SOURCE, "records_under_test.py", "exec", dont_inherit=True), vars(module)
        )
    finally:
        del sys.modules[module.__name__]
    return module.Record


METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


def test_classes_made_from_cached_code_are_the_classes_python_makes(code_cache: Path) -> None:
    plain = _record_class()
    dataclass_code.install()
    compiled_now = _record_class()  # compiled by the hook, kept
    dataclass_code.save()
    assert code_cache.is_file()
    dataclass_code.uninstall()
    dataclass_code._compiled.clear()
    dataclass_code.install()  # from the file this time
    assert dataclass_code._compiled, "the saved code was not read back"
    from_file = _record_class()
    for cls in (compiled_now, from_file):
        for method in METHODS:
            assert getattr(cls, method).__code__ == getattr(plain, method).__code__, method
        record = cls("a", (1, 2))
        assert record == cls("a", (1, 2)) and hash(record) == hash(cls("a", (1, 2)))
        assert repr(record) == "Record(name='a', sizes=(1, 2), note=None, extra=())"
        with pytest.raises(AttributeError):
            record.name = "b"  # frozen still


def _plant(path: Path, mode: int) -> None:
    """A cache file whose code for the record class's __init__ text records that it ran."""
    dataclass_code.install()
    _record_class()
    dataclass_code.uninstall()
    texts = [t for t in dataclass_code._compiled if "def __init__" in t]
    planted = compile("def __create_fn__(**kw):\n def f(*a, **k): pass\n return f", "<p>", "exec")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(marshal.dumps({text: planted for text in texts}))
    os.chmod(path, mode)
    dataclass_code._compiled.clear()


def _init_is_planted() -> bool:
    dataclass_code.install()
    try:
        cls = _record_class()
        return not hasattr(cls("x"), "name")  # the planted __init__ sets nothing
    finally:
        dataclass_code.uninstall()


def test_the_users_own_cache_file_is_used(code_cache: Path) -> None:
    _plant(code_cache, 0o600)
    assert _init_is_planted()  # the file is read: the checks below would see a planted one


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("mode", [0o620, 0o602], ids=["group-writable", "world-writable"])
def test_a_cache_file_others_can_write_is_ignored(code_cache: Path, mode: int) -> None:
    _plant(code_cache, mode)
    assert not _init_is_planted()


def test_a_linked_cache_file_is_ignored(code_cache: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.marshal"
    _plant(target, 0o600)
    code_cache.parent.mkdir(parents=True, exist_ok=True)
    code_cache.symlink_to(target)
    assert not _init_is_planted()


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00garbage", marshal.dumps(["a list"]), marshal.dumps({"text": "not code"})],
    ids=["empty", "garbage", "a list", "not code"],
)
def test_a_broken_cache_file_is_ignored(code_cache: Path, content: bytes) -> None:
    code_cache.parent.mkdir(parents=True)
    code_cache.write_bytes(content)
    os.chmod(code_cache, 0o600)
    dataclass_code.install()
    assert _record_class()("x").name == "x"
    assert all(not isinstance(v, str) for v in dataclass_code._compiled.values())


def test_saving_never_fails_the_command(code_cache: Path) -> None:
    code_cache.parent.parent.mkdir(parents=True)
    code_cache.parent.parent.chmod(0o500)  # a read-only cache folder
    try:
        dataclass_code.install()
        _record_class()
        dataclass_code.save()  # no exception
    finally:
        code_cache.parent.parent.chmod(0o700)
    assert not code_cache.exists() or os.geteuid() == 0


def test_the_program_writes_the_cache_once_and_reuses_it(tmp_path: Path, gpuenv_cli: Any) -> None:
    env = {"GPUENV_CACHE_DIR": str(tmp_path)}
    args = ("resolve", "torch", "--gpu", "8.6", "--driver", "550.54.14", "--os", "linux")
    first = gpuenv_cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    path = tmp_path / dataclass_code.KIND / dataclass_code.entry_name("resolve")
    assert path.is_file() and (path.stat().st_mode & 0o077) == 0
    # the command's own file, nothing else: another command reads only the code it uses
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    written = path.stat().st_mtime_ns, path.stat().st_ino
    second = gpuenv_cli(*args, env=env)
    assert second.stdout == first.stdout and second.returncode == 0
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == written  # nothing new to keep


def test_each_command_reads_and_writes_its_own_file(code_cache: Path) -> None:
    dataclass_code.install("detect")
    _record_class()
    dataclass_code.save()
    dataclass_code.uninstall()
    dataclass_code._compiled.clear()
    written = code_cache.parent / dataclass_code.entry_name("detect")
    assert written.is_file() and not code_cache.exists()
    dataclass_code.install("resolve")
    assert not dataclass_code._compiled, "another command's file was read"
    dataclass_code.uninstall()
    dataclass_code.install("detect")
    assert dataclass_code._compiled


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["resolve", "torch"], "resolve"),
        (["-v", "lock", "jax"], "lock"),
        (["--quiet", "cache", "clean"], "cache"),
        (["--help"], None),
        (["--help", "lock"], None),  # the group answers --help and runs no command
        (["--version", "resolve"], None),
        ([], None),
        (["../../etc/x", "resolve"], None),  # a file name is never a command, nor a later word
        (["resolve/../x"], None),
        (["nosuchcommand"], None),
    ],
)
def test_the_command_of_a_command_line(args: list[str], command: str | None) -> None:
    from gpuenv.commands.table import command_of

    assert command_of(args) == command
