"""conda-lock is the authority on its format: gpuenv's writer and reader agree with its own.

gpuenv writes its lockfiles with PyYAML (gpuenv.lock.conda_lock.write) and reads them with
gpuenv.lock.conda_lock.read (libyaml, no pydantic); conda-lock is a test dependency only. Every
lockfile in lockfiles/ and every kind the tests build (pip only, portable, conda with pip, locked
for real through uv and py-rattler) is read both ways and compared field by field, written again
by conda-lock's own writer from what its parser read and compared byte for byte, and rendered by
`conda-lock render`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conda_lock.lockfile import parse_conda_lock_file, write_conda_lock_file

from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, build_install_repos, jax_plan, make_lock
from lockdata import load, write_valid

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "lockfiles").glob("*lock.yml"))


def conda_lock_view(path: Path) -> dict[str, Any]:
    """What install needs from a lockfile, as conda-lock's own parser reads it."""
    lockfile = parse_conda_lock_file(path)
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


def conda_lock_rewrite(path: Path, tmp: Path) -> str:
    """The YAML conda-lock's own writer makes of what its parser read from `path`."""
    again = tmp / f"conda-lock-wrote-{path.name}"
    write_conda_lock_file(
        parse_conda_lock_file(path), again, metadata_choices=None, include_help_text=False
    )
    return again.read_text(encoding="utf-8")


def without_header(text: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)


def assert_agree(path: Path, tmp: Path) -> None:
    theirs, ours = conda_lock_view(path), gpuenv_view(path)
    assert ours == theirs
    assert ours["pip"] or ours["conda"]  # a lockfile with packages: nothing compared vacuously
    assert without_header(path.read_text(encoding="utf-8")) == conda_lock_rewrite(path, tmp)


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_lockfiles(path: Path, tmp_path: Path) -> None:
    assert_agree(path, tmp_path)


def test_there_are_committed_lockfiles() -> None:
    assert len(COMMITTED) >= 4


@pytest.mark.parametrize("conda", [False, True])
@pytest.mark.parametrize("portable", [False, True])
def test_written_lockfiles(conda: bool, portable: bool, tmp_path: Path) -> None:
    assert_agree(write_valid(tmp_path / "x.lock.yml", conda=conda, portable=portable), tmp_path)


def test_written_in_conda_locks_order_whatever_the_order_given(tmp_path: Path) -> None:
    """conda-lock sorts packages (manager, name) and dependencies, and never locks a virtual
    package (`__cuda`): gpuenv's writer gives the same file from entries in any order."""
    from gpuenv.lock.conda import CondaArtifact
    from gpuenv.lock.conda_lock.write import build_lockfile, write_lockfile
    from gpuenv.lock.model import LockInputs
    from gpuenv.lock.pypi import PipArtifact
    from lockdata import SHA_A, SHA_B, conda_record

    plan = jax_plan("0.4.30", conda=("cudatoolkit=11.2",))
    pip = [
        PipArtifact(
            "numpy", "1.26.4", "https://files.example/numpy-1.26.4-py3-none-any.whl", SHA_B, None
        ),
        PipArtifact(
            "jax", "0.4.30", "https://files.example/jax-0.4.30-py3-none-any.whl", SHA_A, None
        ),
    ]
    toolkit = {**conda_record(), "depends": ["zlib >=1.2", "libgcc-ng >=9", "__glibc >=2.17"]}
    conda = [
        CondaArtifact(conda_record("zlib", "1.3")),
        CondaArtifact(toolkit),
        CondaArtifact({**conda_record("__cuda", "12.4"), "url": "https://conda.example/x"}),
    ]
    path = tmp_path / "x.conda-lock.yml"
    write_lockfile(
        build_lockfile(
            LockInputs(plan, ("https://conda.example/main",), False, None, ()), pip, conda
        ),
        path,
    )
    assert_agree(path, tmp_path)
    names = [p["name"] for p in load(path)["package"]]
    assert names == ["cudatoolkit", "zlib", "jax", "numpy"]


@pytest.fixture(scope="module")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("install-repos"))


@pytest.mark.parametrize(
    "kind", ["pip", "portable", "conda"], ids=["pip", "portable", "conda-and-pip"]
)
def test_lockfiles_locked_for_real(kind: str, install_repos: InstallRepos, tmp_path: Path) -> None:
    plan = jax_plan("0.4.31", conda=("cudatoolkit=11.2",) if kind == "conda" else ())
    path = make_lock(install_repos, tmp_path / "x.lock.yml", plan, portable=kind == "portable")
    assert_agree(path, tmp_path)


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


@pytest.mark.parametrize("conda", [False, True], ids=["pip", "conda-and-pip"])
def test_conda_lock_render_lists_every_file_and_hash(conda: bool, tmp_path: Path) -> None:
    """conda-lock's own command reads gpuenv's files: `render --kind explicit` lists each."""
    import shutil
    import subprocess
    import sys

    path = write_valid(tmp_path / "x.conda-lock.yml", conda=conda)
    exe = shutil.which("conda-lock", path=str(Path(sys.executable).parent))
    assert exe is not None, "conda-lock is a test dependency (pip install -e '.[test]')"
    done = subprocess.run(
        [exe, "render", "--kind", "explicit", path.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rendered = (tmp_path / "conda-linux-64.lock").read_text(encoding="utf-8")
    for entry in load(path)["package"]:
        assert entry["hash"]["sha256"] in rendered, entry["name"]
