"""install: atomic, hash-checked, idempotent, serialized; both backends; offline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuenv.envs.inventory import scan_store
from gpuenv.envs.store import EnvLocation, interpreter, read_metadata
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in


def env_python(name: str) -> Path:
    current = EnvLocation.named(name).current()
    assert current is not None
    return interpreter(current)


def test_venv_install_then_noop(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    first = gpuenv("install", str(lockfile), "--name", "lab")
    assert first.returncode == 0, first.stderr
    assert "installed jax 0.4.30 [cpu]" in first.stdout
    python = env_python("lab")
    assert run_in(python, "import jax, sys; print(jax.__version__, sys.prefix)").startswith(
        "0.4.30 "
    )
    meta = read_metadata(EnvLocation.named("lab").current())  # type: ignore[arg-type]
    assert meta["backend"] == "venv" and meta["stack"] == {"jax": "0.4.30 [cpu]"}
    again = gpuenv("install", str(lockfile), "--name", "lab")
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert [e.name for e in scan_store().envs] == ["lab"]


def test_altered_hash_is_refused_and_the_old_environment_still_works(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    good = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    assert gpuenv("install", str(good), "--name", "lab").returncode == 0
    newer = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    text = newer.read_text()
    sha = next(line.split()[-1] for line in text.splitlines() if "sha256:" in line)
    newer.write_text(text.replace(sha, "ab" * 32, 1))
    bad = gpuenv("install", str(newer), "--name", "lab")
    assert bad.returncode != 0
    assert "does not match the lockfile" in bad.stderr and "Traceback" not in bad.stderr
    assert run_in(env_python("lab"), "import jax; print(jax.__version__)") == "0.4.30"


def test_killed_install_leaves_the_old_environment_and_the_next_run_succeeds(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    assert gpuenv("install", str(old), "--name", "lab").returncode == 0
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    for delay in (0.3, 0.6, 0.9, 1.2):
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuenv", "install", str(new), "--name", "lab"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=os.environ.copy(),
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        version = run_in(env_python("lab"), "import jax; print(jax.__version__)")
        assert version in ("0.4.30", "0.4.31")  # whichever is linked works; never a broken one
    done = gpuenv("install", str(new), "--name", "lab")
    assert done.returncode == 0, done.stderr
    assert run_in(env_python("lab"), "import jax; print(jax.__version__)") == "0.4.31"
    where = EnvLocation.named("lab")
    live, previous = where.current(), where.previous_version()
    assert live is not None
    # no leftover: the live version, and at most the one it replaced (kept for a rollback)
    kept = {live.name} | ({previous.name} if previous else set())
    real = {p.name for p in where.versions.iterdir() if p.is_dir() and not p.is_symlink()}
    assert real == kept
    assert previous is None or read_metadata(previous)["stack"] == {"jax": "0.4.30 [cpu]"}


def test_concurrent_installs_end_consistent(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.31"))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gpuenv", "install", str(lockfile), "--name", "lab"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    said = " ".join(out for out, _ in outputs)
    assert said.count("installed jax 0.4.31") + said.count("nothing to do") == 2
    assert run_in(env_python("lab"), "import jax; print(jax.__version__)") == "0.4.31"


def test_conda_backend_with_pip_part(install_repos: InstallRepos, tmp_path: Path) -> None:
    plan = jax_plan("0.4.30", conda=("cudatoolkit=11.2",))
    lockfile = make_lock(install_repos, tmp_path / "conda.lock.yml", plan)
    result = gpuenv("install", str(lockfile), "--prefix", str(tmp_path / "env"))
    assert result.returncode == 0, result.stderr
    env = tmp_path / "env"
    assert (env / "share" / "gpuenv-test" / "cudatoolkit.txt").is_file()  # linked by rattler
    assert not (env / "activate.sh").exists()  # conda prefixes: `gpuenv activate` (rattler)
    version, prefix = run_in(
        env / "bin" / "python", "import jax, sys; print(jax.__version__, sys.prefix)"
    ).split()
    assert version == "0.4.30"
    assert Path(prefix).resolve() == env.resolve()  # the wheels went into the conda prefix


def test_conda_package_with_a_wrong_hash_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(
        install_repos, tmp_path / "conda.lock.yml", jax_plan(conda=("cudatoolkit=11.2",))
    )
    text = lockfile.read_text()
    md5 = next(line.split()[-1] for line in text.splitlines() if line.strip().startswith("md5:"))
    lockfile.write_text(text.replace(md5, "f" * 32))
    result = gpuenv("install", str(lockfile), "--prefix", str(tmp_path / "env"))
    assert result.returncode != 0 and "does not match" in result.stderr
    assert not (tmp_path / "env").exists()


def test_fetch_then_offline_install(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan(), portable=True)
    wheelhouse = tmp_path / "wheelhouse"
    fetched = gpuenv(
        "fetch", str(lockfile), "-d", str(wheelhouse), env={"PIP_INDEX_URL": install_repos.index}
    )
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(p.name for p in wheelhouse.iterdir()) == [
        "jax-0.4.30-py3-none-any.whl",
        "numpy-1.26.4-py3-none-any.whl",
    ]
    # no index at all now: only the wheelhouse
    offline = gpuenv(
        "install",
        str(lockfile),
        "--name",
        "off",
        "--offline",
        "--from",
        str(wheelhouse),
        env={"PIP_INDEX_URL": "http://127.0.0.1:9/simple/"},
    )
    assert offline.returncode == 0, offline.stderr
    assert run_in(env_python("off"), "import jax; print(jax.__version__)") == "0.4.30"


def test_lockfile_for_another_platform_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    plan = jax_plan()
    lockfile = make_lock(
        install_repos,
        tmp_path / "w.lock.yml",
        type(plan)(**{**plan.__dict__, "platform": "osx-arm64"}),
    )
    result = gpuenv("install", str(lockfile), "--name", "x")
    assert (
        result.returncode != 0
        and "osx-arm64" in result.stderr
        and "this machine is linux-64" in result.stderr
    )


def test_prefix_that_is_not_an_environment_is_left_alone(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep me")
    result = gpuenv("install", str(lockfile), "--prefix", str(precious))
    assert result.returncode != 0 and "not a gpuenv environment" in result.stderr
    assert (precious / "data.txt").read_text() == "keep me"


@pytest.mark.parametrize("name", ["../escape", "", "a b", "lab\n", "a/b", "..", ".", "NUL"])
def test_bad_environment_names(name: str, install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    result = gpuenv("install", str(lockfile), "--name", name)
    assert result.returncode == 2 and "environment name" in result.stderr  # bad input
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "home" / "envs").exists()  # refused before any folder is made
