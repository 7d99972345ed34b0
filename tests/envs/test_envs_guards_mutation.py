"""The environment store where no other test looked (envs' mutation survivors,
benchmarks/mutation/envs.md): the install line's word on where the wheels come from for an
environment of many wheels (`local is len(wheels)`: CPython keeps one object per small int, so
only a count past 256 tells identity from equality; a large stack has that many), the name an
install takes from its lockfile, a uv that a signal ends, an environment's size and the
smoke test's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuenv.envs.artifacts import Artifact, InstallSource
from gpuenv.envs.transaction import _wheel_origin
from installrepos import InstallRepos, jax_plan, make_lock


def _wheels(local: int, remote: int) -> list[InstallSource]:
    out = []
    for i in range(local + remote):
        art = Artifact("pip", f"p{i}", f"p{i}-1.0-py3-none-any.whl", "", "0" * 64, None)
        url = f"file:///house/p{i}-1.0-py3-none-any.whl" if i < local else f"https://x.example/p{i}"
        out.append(InstallSource(art, url))
    return out


@pytest.mark.parametrize("count", [3, 256, 300, 1000])
def test_every_wheel_local_is_said_so_however_many(count: int) -> None:
    assert _wheel_origin(_wheels(count, 0)).startswith(
        "from local files (a wheelhouse or the cache)"
    )
    assert _wheel_origin(_wheels(count, 1)).startswith(f"{count} from local files, the rest")
    assert (
        _wheel_origin(_wheels(0, count)) == "uv downloads each and checks it against the lockfile"
    )


@pytest.mark.parametrize(
    ("lockfile", "name"),
    [
        ("pylock.lab.toml", "lab"),
        ("pylock.toml", "default"),
        ("jax.conda-lock.yml", "jax"),
        # only pylock.NAME.toml is cut as a pylock: another .toml, or a pylock.* of another
        # suffix, keeps its name (less a lockfile suffix it has)
        ("environment.toml", "environment.toml"),
        ("pylock.lab.yml", "pylock.lab"),
    ],
)
def test_an_install_without_a_name_is_named_for_its_lockfile(lockfile: str, name: str) -> None:
    from gpuenv.envs.install_lockfile import name_from_lockfile

    assert name_from_lockfile(Path("/some/where") / lockfile) == name


def _killed_uv(tmp_path: Path) -> str:
    """A uv that a signal ends (the OOM killer, a ^C): its return code is negative."""
    import os
    import sys

    uv = tmp_path / "uv"
    uv.write_text(
        f"#!{sys.executable}\nimport os, signal, sys\nsys.stderr.write('killed\\n')\n"
        "sys.stderr.flush()\nos.kill(os.getpid(), signal.SIGKILL)\n",
        encoding="utf-8",
    )
    os.chmod(uv, 0o755)
    return str(uv)


def test_a_uv_ended_by_a_signal_is_a_failure_not_a_success(tmp_path: Path) -> None:
    from gpuenv.envs.backends import create_venv, install_wheels
    from gpuenv.envs.errors import InstallError

    uv = _killed_uv(tmp_path)
    with pytest.raises(InstallError, match=r"could not create a Python 3\.12 environment"):
        create_venv(tmp_path / "env", "3.12", uv)
    with pytest.raises(InstallError, match="uv could not install the wheels"):
        install_wheels(tmp_path / "python", _wheels(1, 0), uv)


def test_an_environment_s_size_is_the_sum_of_its_files(tmp_path: Path) -> None:
    """`gpuenv envs --size`: every file's bytes, a link counted as itself, nothing more."""
    from gpuenv.envs.inventory import folder_size

    env = tmp_path / "env"
    (env / "lib" / "deep").mkdir(parents=True)
    (env / "a.txt").write_bytes(b"x" * 10)
    (env / "lib" / "deep" / "b.so").write_bytes(b"y" * 4096)
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"z" * 100_000)
    (env / "lib" / "link").symlink_to(outside)
    link_size = (env / "lib" / "link").lstat().st_size
    assert folder_size(env) == 10 + 4096 + link_size
    empty = tmp_path / "empty"
    empty.mkdir()
    assert folder_size(empty) == 0


def test_the_install_s_smoke_test_waits_five_minutes_for_the_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import that does not finish (a framework stuck loading its libraries) is given 300 s
    by default, and the message says so."""
    import subprocess

    from gpuenv.envs import backends

    waited: list[float] = []

    def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        waited.append(float(kwargs["timeout"]))  # type: ignore[arg-type]
        raise subprocess.TimeoutExpired(cmd, float(kwargs["timeout"]))  # type: ignore[arg-type]

    monkeypatch.setattr(backends.subprocess, "run", run)
    said = backends.smoke_test(tmp_path / "python", ["jax", "torch"])
    assert said == "importing jax, torch took more than 300s"
    assert waited == [300.0]


def test_an_install_smoke_tests_its_frameworks_unless_told_not_to(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """install_lockfile's callers (the command, gpuenv.api) say whether to; called without a
    word it imports the frameworks, as `gpuenv install` does by default."""
    from gpuenv.envs import transaction
    from gpuenv.envs.install_lockfile import install_lockfile
    from gpuenv.envs.store import EnvLocation

    asked: list[object] = []

    def install(*args: object, **kwargs: object) -> None:
        asked.append(kwargs["smoke"])

    monkeypatch.setattr(transaction, "install", install)
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    install_lockfile(lockfile, EnvLocation.named("smoked"))
    install_lockfile(lockfile, EnvLocation.named("smoked"), smoke=False)
    assert asked == [True, False]
