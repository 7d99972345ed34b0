"""gpuenv's own lockfile reader and conda-lock's parser give the same answers.

conda-lock writes gpuenv's lockfiles and stays the authority on the format; install reads them
with gpuenv.lock.conda_lock.read (libyaml, no pydantic). Every lockfile in lockfiles/ and every kind the
tests build (pip only, portable, conda with pip, locked for real through uv and py-rattler) is
read both ways here and compared field by field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuenv.lock import conda_lock_api
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, build_install_repos, jax_plan, make_lock
from lockdata import write_valid

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "lockfiles").glob("*lock.yml"))


def conda_lock_view(path: Path) -> dict[str, Any]:
    """What install needs from a lockfile, as conda-lock's own parser reads it."""
    lockfile = conda_lock_api.load().parse_conda_lock_file(path)
    custom = lockfile.metadata.custom_metadata or {}
    conda, pip = [], []
    for dep in lockfile.package:
        if dep.manager == "conda":
            extra = json.loads(custom[f"gpuenv.conda.{dep.name}"])
            conda.append(
                {
                    **extra,
                    "name": dep.name,
                    "version": dep.version,
                    "build": dep.build or "",
                    "url": dep.url,
                    "md5": dep.hash.md5,
                    "sha256": dep.hash.sha256,
                    "depends": [f"{k} {v}".strip() for k, v in dep.dependencies.items()],
                }
            )
        else:
            pip.append((dep.name, dep.version, dep.url, dep.hash.sha256))
    return {
        "platform": lockfile.metadata.platforms[0],
        "plan": json.loads(custom["gpuenv.plan"]),
        "python": custom["gpuenv.python"],
        "inputs_hash": custom.get("gpuenv.inputs_hash", ""),
        "intent_hash": custom.get("gpuenv.intent_hash", ""),
        "fallback": custom.get("gpuenv.fallback", ""),
        "machine_class": custom.get("gpuenv.machine_class"),
        "conda": sorted(conda, key=lambda r: r["name"]),
        "pip": sorted(pip),
    }


def gpuenv_view(path: Path) -> dict[str, Any]:
    locked = load_locked(path)
    return {
        "platform": locked.platform,
        "plan": locked.plan.to_json(with_rejected=False),
        "python": locked.python,
        "inputs_hash": locked.inputs_hash,
        "intent_hash": locked.intent_hash,
        "fallback": locked.fallback,
        "machine_class": locked.machine_class,
        "conda": sorted(locked.conda, key=lambda r: r["name"]),
        "pip": sorted((p.name, p.version, p.url, p.sha256) for p in locked.pip),
    }


def assert_agree(path: Path) -> None:
    theirs, ours = conda_lock_view(path), gpuenv_view(path)
    assert ours == theirs
    assert ours["pip"] or ours["conda"]  # a lockfile with packages: nothing compared vacuously


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_lockfiles(path: Path) -> None:
    assert_agree(path)


def test_there_are_committed_lockfiles() -> None:
    assert len(COMMITTED) >= 4


@pytest.mark.parametrize("conda", [False, True])
@pytest.mark.parametrize("portable", [False, True])
def test_written_lockfiles(conda: bool, portable: bool, tmp_path: Path) -> None:
    assert_agree(write_valid(tmp_path / "x.lock.yml", conda=conda, portable=portable))


@pytest.fixture(scope="module")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("install-repos"))


@pytest.mark.parametrize(
    "kind", ["pip", "portable", "conda"], ids=["pip", "portable", "conda-and-pip"]
)
def test_lockfiles_locked_for_real(kind: str, install_repos: InstallRepos, tmp_path: Path) -> None:
    plan = jax_plan("0.4.31", conda=("cudatoolkit=11.2",) if kind == "conda" else ())
    path = make_lock(install_repos, tmp_path / "x.lock.yml", plan, portable=kind == "portable")
    assert_agree(path)


def test_reading_a_lockfile_loads_neither_conda_lock_nor_pydantic() -> None:
    """The speed of install's read (issue 13): no pydantic models on that path."""
    import subprocess
    import sys

    code = (
        "import sys; from gpuenv.lock.load import load_locked;"
        f" load_locked({str(COMMITTED[0])!r});"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('conda_lock', 'pydantic')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
