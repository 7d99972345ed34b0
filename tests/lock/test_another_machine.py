"""A lockfile for another machine carries nothing of this one (issue 18).

`gpuenv lock` for a described machine (--os/--gpu/--driver/--machine) writes index-relative
(portable) entries by default, and a wheel that only a folder of this machine has (a find-links
folder, a file:// index in pylock.toml's URLs) is an error naming the folder, unless
--local-paths asks for those paths. Local indexes and a find-links folder stand in for this
machine's pip settings; the lock runs the real uv.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gpuenv.lock.load import load_locked
from localrepos import build_simple_index, build_wheel
from lockdata import in_process

WIN311 = "cp311-cp311-win_amd64"
FLAGS = ["jax", "--no-gpu", "--os", "windows", "--python", "3.11", "--exclude-newer", "none"]


@dataclass(frozen=True)
class Here:
    index: str  # file:// index with jax and jaxlib
    full: str  # file:// index with numpy too
    house: Path  # find-links folder: the only numpy of `index`


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Here:
    root = tmp_path_factory.mktemp("this-machine")
    wheels = root / "wheels"
    jax = [
        build_wheel(wheels, "jax", "0.10.2", requires=["jaxlib==0.10.2", "numpy"]),
        build_wheel(wheels, "jaxlib", "0.10.2", tag=WIN311, requires=["numpy"]),
    ]
    house = root / "wheelhouse"
    numpy = build_wheel(house, "numpy", "1.26.4", tag=WIN311)
    return Here(
        index=build_simple_index(root / "index", jax),
        full=build_simple_index(root / "full", [*jax, numpy]),
        house=house,
    )


@dataclass(frozen=True)
class Ran:
    exit_code: int
    output: str


@pytest.fixture
def gpuenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., Ran]:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "gpuenv-cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)

    def run(*args: str) -> Ran:
        code, out, err = in_process(*args)  # the shared runner: exit status, stdout, stderr
        return Ran(code, out + err)

    return run


def test_a_wheel_only_a_local_folder_has_is_an_error_naming_it(
    gpuenv: Callable[..., Ran], here: Here, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", here.index)
    monkeypatch.setenv("PIP_FIND_LINKS", str(here.house))
    out = tmp_path / "win.conda-lock.yml"
    ran = gpuenv("lock", *FLAGS, "-o", str(out))
    assert ran.exit_code == 1, ran.output
    assert "for another machine" in ran.output and str(here.house) in ran.output
    assert "numpy 1.26.4" in ran.output and "--local-paths" in ran.output
    assert not out.exists()

    # asked for: the path is written (and said), the index's wheels stay index-relative
    ran = gpuenv("lock", *FLAGS, "-o", str(out), "--local-paths")
    assert ran.exit_code == 0, ran.output
    urls = {p.name: p.url for p in load_locked(out).pip}
    assert urls["numpy"].startswith("file://") and str(here.house) in urls["numpy"]
    assert urls["jax"] == "index:///jax/jax-0.10.2-py3-none-any.whl"
    assert "not portable: numpy" in ran.output


def test_index_relative_entries_are_the_default_for_another_machine(
    gpuenv: Callable[..., Ran], here: Here, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", here.full)
    out = tmp_path / "win.conda-lock.yml"
    ran = gpuenv("lock", *FLAGS, "-o", str(out))
    assert ran.exit_code == 0, ran.output
    text = out.read_text(encoding="utf-8")
    assert "file://" not in text and here.full.split("/simple")[0] not in text
    meta = yaml.safe_load(text)["metadata"]["custom_metadata"]
    assert meta["gpuenv.portable"] == "true"
    assert all(p.portable for p in load_locked(out).pip)


def test_pylock_for_another_machine_refuses_local_urls_and_says_how(
    gpuenv: Callable[..., Ran], here: Here, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", here.full)
    out = tmp_path / "pylock.toml"
    ran = gpuenv("lock", *FLAGS, "--format", "pylock", "-o", str(out))
    assert ran.exit_code == 1, ran.output
    folder = here.full.split("/simple")[0][len("file://") :]
    assert folder in ran.output and "--format conda-lock" in ran.output
    assert "--local-paths" in ran.output and not out.exists()
    ran = gpuenv("lock", *FLAGS, "--format", "pylock", "-o", str(out), "--local-paths")
    assert ran.exit_code == 0, ran.output
    assert "file://" in out.read_text(encoding="utf-8")
