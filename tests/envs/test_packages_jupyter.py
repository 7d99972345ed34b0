"""Extra packages beside a framework, and Jupyter kernels for environments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv.envs.jupyter import (
    KernelError,
    jupyter_data_dir,
    kernel_dir,
    register_kernel,
    remove_kernel,
)
from gpuenv.resolve.packages import merge_packages, split_requirements
from gpuenv.resolve.requirements import RequirementError


def test_split_requirements_keeps_frameworks_for_the_resolver() -> None:
    frameworks, packages = split_requirements(
        ("torch", "jupyterlab", "torchvision", "pandas>=2", "Scikit_Learn[alldeps]")
    )
    assert frameworks == ("torch", "torchvision")
    assert packages == ("jupyterlab", "pandas>=2", "Scikit_Learn[alldeps]")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("evil @ https://example.invalid/evil-1.0.tar.gz", "direct URLs"),
        ("evil @ file:///tmp/evil", "direct URLs"),
        ('pandas; sys_platform == "win32"', "markers"),
        ("../../etc/passwd", "is not a requirement"),
        ("pandas>>2", "is not a requirement"),
        ("", "is not a requirement"),
    ],
)
def test_hostile_extra_packages_are_refused(text: str, message: str) -> None:
    with pytest.raises(RequirementError, match=message):
        split_requirements(("torch", text))


def test_merge_packages_one_entry_per_project_later_wins() -> None:
    merged = merge_packages(("pandas<2", "jupyterlab"), ("Pandas>=2.1",), ())
    assert merged == ("Pandas>=2.1", "jupyterlab")


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({"JUPYTER_DATA_DIR": "/j", "HOME": "/h"}, "linux", "/j"),
        ({"HOME": "/h"}, "linux", "/h/.local/share/jupyter"),
        ({"HOME": "/h", "XDG_DATA_HOME": "/x"}, "linux", "/x/jupyter"),
        ({"HOME": "/h"}, "darwin", "/h/Library/Jupyter"),
        ({"HOME": "/h", "APPDATA": "/a"}, "win32", "/a/jupyter"),
    ],
)
def test_jupyter_data_dir(environ: dict[str, str], platform: str, expected: str) -> None:
    assert jupyter_data_dir(environ, platform) == Path(expected)


def test_register_and_remove_a_kernel(tmp_path: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter"), "HOME": str(tmp_path)}
    python = tmp_path / "store" / "lab" / "bin" / "python"
    folder = register_kernel(python, "Lab", "torch 2.7.1 [cu118]", {"PATH": "/x"}, environ)
    # Jupyter lowercases kernel names; a store name with capitals keeps its own kernel
    assert folder.parent == tmp_path / "jupyter" / "kernels"
    assert folder.name.startswith("gpuenv-lab-") and folder.name == folder.name.lower()
    spec = json.loads((folder / "kernel.json").read_text())
    assert spec["argv"][:3] == [str(python), "-m", "ipykernel_launcher"]
    assert spec["display_name"] == "Lab (torch 2.7.1 [cu118])" and spec["env"] == {"PATH": "/x"}
    register_kernel(python, "Lab", "torch 2.8.0 [cu128]", {}, environ)  # a rebuild replaces it
    assert "2.8.0" in json.loads((folder / "kernel.json").read_text())["display_name"]
    assert remove_kernel("Lab", environ) and not folder.exists()
    assert not remove_kernel("Lab", environ)


def test_a_kernel_gpuenv_did_not_write_is_never_replaced_or_removed(tmp_path: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    theirs = kernel_dir("lab", environ)
    theirs.mkdir(parents=True)
    (theirs / "kernel.json").write_text('{"argv": ["python"], "display_name": "mine"}')
    with pytest.raises(KernelError, match="not written by gpuenv"):
        register_kernel(Path("/p"), "lab", "", {}, environ)
    assert not remove_kernel("lab", environ)
    assert "mine" in (theirs / "kernel.json").read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = kernel_dir("other", environ)
    linked.symlink_to(elsewhere)
    with pytest.raises(KernelError):
        register_kernel(Path("/p"), "other", "", {}, environ)
    assert not remove_kernel("other", environ) and elsewhere.is_dir()


def test_macos_is_told_by_the_platforms_value() -> None:
    # sys.platform is made at start-up, not the literal in gpuenv's code
    darwin = "".join(["dar", "win"])
    assert jupyter_data_dir({"HOME": "/h"}, darwin) == Path("/h/Library/Jupyter")


def test_a_kernel_json_too_deep_to_read_is_not_gpuenvs(tmp_path: Path) -> None:
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    theirs = kernel_dir("lab", environ)
    theirs.mkdir(parents=True)
    content = b"[" * 100_000 + b"]" * 100_000
    (theirs / "kernel.json").write_bytes(content)
    assert not remove_kernel("lab", environ)
    assert (theirs / "kernel.json").read_bytes() == content


def _padded_kernel(tmp_path: Path, size: int) -> tuple[Path, dict[str, str]]:
    """gpuenv's own kernel.json, blank-padded to `size` bytes."""
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    folder = register_kernel(Path("/p"), "lab", "", {}, environ)
    written = (folder / "kernel.json").read_bytes()
    padded = written[:-1] + b" " * (size - len(written)) + written[-1:]
    assert len(padded) == size
    (folder / "kernel.json").write_bytes(padded)
    return folder, environ


def test_a_kernel_json_over_1_mib_is_not_read(tmp_path: Path) -> None:
    folder, environ = _padded_kernel(tmp_path, (1 << 20) + 1)
    assert not remove_kernel("lab", environ)
    assert (folder / "kernel.json").is_file()


def test_a_kernel_json_of_exactly_1_mib_is_read(tmp_path: Path) -> None:
    _folder, environ = _padded_kernel(tmp_path, 1 << 20)
    assert remove_kernel("lab", environ)  # still recognised as gpuenv's own


def test_a_linked_kernel_json_is_not_taken_for_gpuenvs(tmp_path: Path) -> None:
    # a kernel.json that is a link to one gpuenv wrote: not followed, so not gpuenv's own
    environ = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    elsewhere = {"JUPYTER_DATA_DIR": str(tmp_path / "elsewhere")}
    ours = register_kernel(Path("/p"), "other", "", {}, elsewhere)
    planted = kernel_dir("other", environ)
    planted.mkdir(parents=True)
    (planted / "kernel.json").symlink_to(ours / "kernel.json")
    assert not remove_kernel("other", environ)
    assert (planted / "kernel.json").is_symlink()
