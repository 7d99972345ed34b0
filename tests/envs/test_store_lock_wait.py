"""A second install waiting for the environment's lock says for whom, and honours a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gpuenv.envs.store import EnvLocation
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in

_HOLDER = """
import sys, time
from gpuenv.envs.filelock import exclusive
from gpuenv.envs.store import EnvLocation
with exclusive(EnvLocation.named(sys.argv[1]).lock_path):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@contextmanager
def lock_held(name: str, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process (as a running install would) holds `name`'s lock for `seconds`."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, name, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_waiting_install_says_so_and_times_out(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    with lock_held("lab", 60) as holder:
        started = time.monotonic()
        result = gpuenv("install", str(lockfile), "--name", "lab", "--lock-timeout", "1")
        took = time.monotonic() - started
        assert result.returncode == 1, result.stderr
        assert (
            f"waiting for another gpuenv install of lab (pid {holder.pid}) to finish (up to 1s)"
            in result.stderr
        )
        assert "still holds the lock" in result.stderr and "--lock-timeout" in result.stderr
        assert "Traceback" not in result.stderr
        assert took < 30  # gave up at the timeout, not when the holder finished
        quiet = gpuenv("install", str(lockfile), "--name", "lab", "-q", "--lock-timeout", "0.5")
        assert quiet.returncode == 1 and "waiting for another gpuenv install" in quiet.stderr
        via_env = gpuenv(
            "install", str(lockfile), "--name", "lab", env={"GPUENV_LOCK_TIMEOUT": "0"}
        )
        assert via_env.returncode == 1 and "still holds the lock" in via_env.stderr
    assert EnvLocation.named("lab").current() is None  # nothing was built while it waited
    assert [p.name for p in EnvLocation.named("lab").versions.iterdir()] == ["lab.lock"]


def test_a_waiting_install_proceeds_when_the_other_finishes(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    with lock_held("lab", 600) as holder:
        waiting = subprocess.Popen(
            [sys.executable, "-m", "gpuenv", "install", str(lockfile), "--name", "lab"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "GPUENV_LOCK_TIMEOUT": "300"},
        )
        assert waiting.stderr is not None
        said = []
        for line in waiting.stderr:  # until it says it waits, then the other one finishes
            said.append(line)
            if line.startswith("waiting for another gpuenv install"):
                break
        assert said and f"waiting for another gpuenv install of lab (pid {holder.pid})" in said[-1]
        assert EnvLocation.named("lab").current() is None
    out, rest = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, "".join(said) + rest
    assert "installed jax 0.4.30" in out
    current = EnvLocation.named("lab").current()
    assert current is not None
    assert run_in(current / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.30"


def test_another_environment_is_not_blocked(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    with lock_held("lab", 60):
        result = gpuenv("install", str(lockfile), "--name", "other", "--lock-timeout", "5")
    assert result.returncode == 0 and "waiting" not in result.stderr


def test_a_bad_timeout_is_bad_input(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    for value in ("soon", "-1", "nan"):
        result = gpuenv(
            "install", str(lockfile), "--name", "lab", env={"GPUENV_LOCK_TIMEOUT": value}
        )
        assert result.returncode == 2 and "GPUENV_LOCK_TIMEOUT" in result.stderr, result.stderr
    flag = gpuenv("install", str(lockfile), "--name", "lab", "--lock-timeout", "-3")
    assert flag.returncode == 2 and "Traceback" not in flag.stderr


def test_the_lock_file_is_made_readable_and_not_executable(tmp_path: Path) -> None:
    from gpuenv.envs.filelock import exclusive

    old = os.umask(0o022)
    try:
        with exclusive(tmp_path / "lab.lock"):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "lab.lock").stat().st_mode & 0o777 == 0o644
