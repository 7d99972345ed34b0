"""Locking runs no package code, and names what it could not get.

A project that publishes only an sdist (whose build backend would write a marker file if run)
must fail the lock with the project named and exit 1, without the backend ever running. An
index that does not answer ends the lock with exit 5 and the index's URL.
"""

from __future__ import annotations

import hashlib
import io
import os
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from gpuenv.lock.pypi import no_wheel_packages
from installrepos import InstallRepos, build_install_repos
from localrepos import build_simple_index, build_wheel

LAB = """
[stack]
requirements = ["jax<0.4.32"]
packages = [{packages}]

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


def _sdist(folder: Path, name: str, marker: Path) -> Path:
    """An sdist whose in-tree build backend writes `marker` the moment it is imported."""
    backend = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('package code ran')\n" + (
        "def get_requires_for_build_wheel(config_settings=None):\n    return []\n"
    )
    members = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "backend.py": backend,
        # Metadata 2.1: not trusted as static, so a resolver that may build, builds
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-1.0/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _add_page(index_root: Path, project: str, files: list[Path]) -> None:
    """A PEP 503 page for files build_simple_index does not lay out (an sdist)."""
    anchors = []
    for f in files:
        target = index_root / "files" / f.name
        target.write_bytes(f.read_bytes())
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        anchors.append(f'<a href="../../files/{f.name}#sha256={digest}">{f.name}</a><br/>')
    page = index_root / "simple" / project
    page.mkdir(parents=True, exist_ok=True)
    (page / "index.html").write_text("<html><body>" + "".join(anchors) + "</body></html>")


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[InstallRepos, Path]:
    root = tmp_path_factory.mktemp("sdist-repos")
    repos = build_install_repos(root)
    marker = root / "MARKER"
    _add_page(root / "index", "evil", [_sdist(root / "sdists", "evil", marker)])
    windows_only = build_wheel(root / "winwheels", "winonly", "1.0", tag="py3-none-win_amd64")
    build_simple_index(root / "index", [windows_only])
    return repos, marker


def _env(tmp_path: Path, index: str) -> dict[str, str]:
    env = {
        **os.environ,
        "PIP_INDEX_URL": index,
        "PIP_CONFIG_FILE": os.devnull,
        "GPUENV_HOME": str(tmp_path / "home"),
        "GPUENV_CACHE_DIR": str(tmp_path / "cache"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX"):
        env.pop(var, None)
    return env


def _gpuenv(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_an_sdist_only_package_is_named_and_never_built(
    repos: tuple[InstallRepos, Path], tmp_path: Path
) -> None:
    index, marker = repos[0].index, repos[1]
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(packages='"evil"'))
    result = _gpuenv("lock", "--lab", str(lab), env=_env(tmp_path, index), cwd=tmp_path)
    assert not marker.exists(), "the sdist's build backend ran during lock"
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED cpu: no wheel of evil for linux-64" in result.stderr
    assert "never builds a source distribution" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "lockfiles" / "cpu.conda-lock.yml").exists()


def test_a_package_with_wheels_for_other_platforms_only_is_named(
    repos: tuple[InstallRepos, Path], tmp_path: Path
) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(packages='"winonly"'))
    result = _gpuenv("lock", "--lab", str(lab), env=_env(tmp_path, repos[0].index), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no wheel of winonly" in result.stderr


def test_the_lab_locks_when_every_package_has_a_wheel(
    repos: tuple[InstallRepos, Path], tmp_path: Path
) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(packages='"numpy"'))
    result = _gpuenv("lock", "--lab", str(lab), env=_env(tmp_path, repos[0].index), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "lockfiles" / "cpu.conda-lock.yml").is_file()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("extra", [[], ["--no-probe"]])
def test_an_unreachable_index_exits_5_and_is_named(extra: list[str], tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/simple/"
    out = tmp_path / "x.lock.yml"
    env = {**_env(tmp_path, dead), "UV_HTTP_RETRIES": "0"}
    result = _gpuenv("lock", "jax", "--os", "linux", "-o", str(out), *extra, env=env, cwd=tmp_path)
    assert result.returncode == 5, result.stderr
    assert dead.split("/simple")[0] in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_a_lab_lock_with_an_unreachable_index_exits_5(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/simple/"
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(packages=""))
    env = {**_env(tmp_path, dead), "UV_HTTP_RETRIES": "0"}
    result = _gpuenv("lock", "--lab", str(lab), env=env, cwd=tmp_path)
    assert result.returncode == 5, result.stderr
    assert "FAILED cpu: could not reach" in result.stderr and dead in result.stderr


@pytest.mark.parametrize(
    ("stderr", "names"),
    [
        (
            "  cause: Because evil==1.0 has no usable wheels and only evil==1.0 is available\n"
            "hint: Wheels are required for `evil` because building from source is disabled",
            ["evil"],
        ),
        (
            "  cause: Because only winonly==1.0 is available and winonly==1.0 has no wheels"
            " with a matching platform tag (e.g., `manylinux_2_28_x86_64`), we can conclude",
            ["winonly"],
        ),
        ("error: No solution found: numpy>=3 and numpy<2", []),
    ],
)
def test_no_wheel_parsing(stderr: str, names: list[str]) -> None:
    assert no_wheel_packages(stderr) == names
