"""Writes through planted links, and Jupyter kernels that are not this environment's.

Hostile round three: `<store>/.setup/NAME.tmp` and `kernel.json.tmp` were written with
write_text(), which follows a link planted there, so a file outside gpuenv's folders was
overwritten; cache folders and `.setup` that were links to a user folder got gpuenv's files
written into them. Every write now goes through the one atomic writer (fs.atomic_write), which
refuses links and devices. Each test plants the link, runs the write, and checks the target.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuenv import cache
from gpuenv.envs.jupyter import (
    KernelError,
    kernel_dir,
    register_kernel,
    remove_kernel,
)
from gpuenv.envs.store import store_root
from gpuenv.errors import exit_code
from gpuenv.fs.atomic_write import OutputPathError, atomic_write_text
from gpuenv.setup.record import (
    SetupRecord,
    SetupRecordError,
    read_record,
    record_path,
    write_record,
)
from installrepos import gpuenv

PRECIOUS = "the user's own file\n"


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "thesis.tex"
    target.parent.mkdir()
    target.write_text(PRECIOUS)
    return target


def _untouched(precious: Path) -> bool:
    return precious.read_text() == PRECIOUS and sorted(os.listdir(precious.parent)) == [
        precious.name
    ]


@pytest.mark.parametrize("planted", ["NAME.tmp", "NAME.json"])
def test_the_setup_record_is_never_written_through_a_link(planted: str, precious: Path) -> None:
    path = record_path("lab")
    path.parent.mkdir(parents=True)
    (path.parent / planted.replace("NAME", "lab")).symlink_to(precious)
    try:
        write_record("lab", SetupRecord(stack="jax"))
    except SetupRecordError as exc:
        assert "symbolic link" in str(exc)  # the record itself is the link: refused
    assert _untouched(precious)


def test_a_setup_folder_that_is_a_link_is_refused(precious: Path) -> None:
    store_root().mkdir(parents=True)
    (store_root() / ".setup").symlink_to(precious.parent)
    with pytest.raises(SetupRecordError, match="symbolic link"):
        write_record("lab", SetupRecord(stack="jax"))
    assert _untouched(precious)
    assert exit_code(SetupRecordError("x")) == 1


def test_the_setup_record_is_still_written(tmp_path: Path) -> None:
    write_record("lab", SetupRecord(stack="jax"))
    write_record("lab", SetupRecord(stack="torch"))
    assert read_record("lab") == SetupRecord(stack="torch")
    assert [p.name for p in record_path("lab").parent.iterdir()] == ["lab.json"]


def test_kernel_json_is_never_written_through_a_link(tmp_path: Path, precious: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    register_kernel(Path("/p/bin/python"), "lab", "jax", {}, environ)
    folder = kernel_dir("lab", environ)
    (folder / "kernel.json.tmp").symlink_to(precious)  # the old temporary name
    register_kernel(Path("/p/bin/python"), "lab", "jax 2", {}, environ)
    assert _untouched(precious)
    assert "jax 2" in json.loads((folder / "kernel.json").read_text())["display_name"]


def test_a_jupyter_data_dir_that_is_a_file_is_one_clear_error(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "jupyter"
    not_a_folder.write_text("")
    with pytest.raises(KernelError, match="JUPYTER_DATA_DIR") as raised:
        register_kernel(Path("/p"), "lab", "", {}, {"JUPYTER_DATA_DIR": str(not_a_folder)})
    assert exit_code(raised.value) == 2  # it had none: a traceback after the install


def test_foo_and_Foo_have_their_own_kernels(tmp_path: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    small = register_kernel(Path("/foo/bin/python"), "foo", "", {}, environ)
    big = register_kernel(Path("/Foo/bin/python"), "Foo", "", {}, environ)
    assert small != big
    assert json.loads((small / "kernel.json").read_text())["argv"][0] == "/foo/bin/python"
    assert remove_kernel("Foo", environ) and not big.exists()
    assert (small / "kernel.json").is_file()  # removing Foo left foo's kernel
    assert not remove_kernel("Foo", environ)


def test_a_kernel_gpuenv_wrote_for_another_environment_is_not_removed(tmp_path: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    other = register_kernel(Path("/a/bin/python"), "a", "", {}, environ)
    spec = json.loads((other / "kernel.json").read_text())
    # an older gpuenv's kernel for `A` in the folder `a` now names (both lowercase to it)
    spec["metadata"]["gpuenv"]["environment"] = "A"
    (other / "kernel.json").write_text(json.dumps(spec))
    assert not remove_kernel("a", environ) and other.exists()
    with pytest.raises(KernelError, match="not written by gpuenv for environment 'a'"):
        register_kernel(Path("/a/bin/python"), "a", "", {}, environ)


@pytest.mark.parametrize("kind", ["recipes", "index-probe"])
def test_a_cache_folder_that_is_a_link_gets_nothing_written(kind: str, precious: Path) -> None:
    root = cache.cache_dir()
    root.mkdir(parents=True)
    (root / kind).symlink_to(precious.parent)
    cache.write_pickle(kind, "k", {"x": 1})
    if kind == "index-probe":
        from gpuenv.lock.probe_cache import _write

        _write("https://index.invalid/simple", "jax", 0.0, files=[])
    assert _untouched(precious)
    with pytest.raises(cache.CacheError, match="symbolic link"):
        cache.kind_dir(kind)


def test_a_planted_cache_tag_link_is_not_written_through(tmp_path: Path) -> None:
    root = cache.cache_dir()
    root.mkdir(parents=True)
    dangling = tmp_path / "outside" / "made-by-gpuenv"
    dangling.parent.mkdir(exist_ok=True)
    (root / cache.TAG_NAME).symlink_to(dangling)
    cache.write_pickle("recipes", "k", 1)
    assert not dangling.exists()


def test_rattlers_cache_folder_as_a_link_is_refused_before_install(
    precious: Path,
) -> None:
    root = cache.cache_dir()
    root.mkdir(parents=True)
    (root / "rattler").symlink_to(precious.parent)
    with pytest.raises(cache.CacheError):
        cache.kind_dir("rattler")
    out = gpuenv("cache", "clean")  # and `cache clean` removes the link, not what it points to
    assert out.returncode == 0, out.stderr
    assert not os.path.lexists(root / "rattler") and _untouched(precious)


def test_the_atomic_writer_refuses_a_link_among_gpuenvs_folders(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "linked").symlink_to(root / "real")
    with pytest.raises(OutputPathError, match="symbolic link"):
        atomic_write_text(root / "linked" / "f", "x", root=root)
    assert not (root / "real" / "f").exists()
    atomic_write_text(root / "real" / "f", "x", root=root)
    assert (root / "real" / "f").read_text() == "x"


def test_a_link_planted_during_the_write_is_caught_before_the_rename(tmp_path: Path) -> None:
    from gpuenv.fs.atomic_write import atomic_write

    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    outside = tmp_path / "outside-folder"
    outside.mkdir()

    def write_and_swap(staged: Path) -> None:
        staged.write_text("gpuenv's")
        (root / "d").rename(root / "d-moved")  # while gpuenv writes, `d` becomes a link
        (root / "d").symlink_to(outside)
        (outside / staged.parent.name).mkdir()  # and the staged file's path still leads on
        (outside / staged.parent.name / staged.name).write_text("staged")

    with pytest.raises(OutputPathError, match="symbolic link"):
        atomic_write(root / "d" / "f", write_and_swap, root=root)
    assert not (outside / "f").exists()
