"""pylock.toml written by gpuenv, installed for real by gpuenv, by uv and by pip (local index)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.pylock import Pylock

from gpuenv.envs.store import EnvLocation, interpreter
from gpuenv.fs.atomic_write import OutputPathError
from gpuenv.lock import LockOptions, check_lockfile
from gpuenv.lock.errors import LockError
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in

UV = Path(sys.executable).parent / "uv"
PIP_LOCK = dict(format="pylock")


def test_pylock_installs_with_gpuenv_and_checks_with_lock_check(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "pylock.toml", jax_plan(), **PIP_LOCK)
    data = tomllib.loads(lockfile.read_text())
    Pylock.from_dict(data)  # PEP 751, as packaging reads it
    assert data["environments"] == ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
    assert data["tool"]["gpuenv"]["platform"] == "linux-64"
    assert '"jax": {' in data["tool"]["gpuenv"]["plan"]
    assert {p["name"] for p in data["packages"]} == {"jax", "numpy"}
    assert lockfile.read_text().startswith("# gpuenv lock (PEP 751): jax 0.4.30 [cpu]")
    # the plan travels in the file: install needs nothing else
    done = gpuenv("install", str(lockfile), "--name", "pl")
    assert done.returncode == 0, done.stderr
    current = EnvLocation.named("pl").current()
    assert current is not None
    assert run_in(interpreter(current), "import jax; print(jax.__version__)") == "0.4.30"
    # --check reads the same file: up to date for these inputs, stale for others
    opts = LockOptions(
        output=lockfile, indexes=install_repos.indexes, exclude_newer="none", format="pylock"
    )
    assert check_lockfile(jax_plan(), opts)[0] is True
    ok, message = check_lockfile(jax_plan("0.4.31"), opts)
    assert not ok and "jax 0.4.30 [cpu] -> 0.4.31 [cpu]" in message


def test_uv_and_pip_install_the_same_file(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "pylock.toml", jax_plan(), **PIP_LOCK)
    for tool in ("uv", "pip"):
        venv = tmp_path / tool
        subprocess.run(
            [str(UV), "venv", "-q", "--seed", "--python", sys.executable, str(venv)], check=True
        )
        python = venv / "bin" / "python"
        if tool == "uv":
            argv = [str(UV), "pip", "install", "--offline", "--preview-features", "pylock"]
            argv += ["--python", str(python), "-r", str(lockfile)]
        else:
            argv = [str(python), "-m", "pip", "install", "--no-index", "-q", "-r", str(lockfile)]
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if tool == "pip" and "pylock" in res.stderr and "not" in res.stderr and res.returncode:
            pytest.skip(f"this pip cannot install pylock.toml: {res.stderr.strip()[-200:]}")
        assert res.returncode == 0, (tool, res.stderr)
        assert run_in(python, "import jax; print(jax.__version__)") == "0.4.30"


def test_another_platform_is_refused_up_front_by_uv_and_gpuenv(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "pylock.toml", jax_plan(), **PIP_LOCK)
    text = lockfile.read_text()
    # the same lock, claiming Windows: uv must refuse it before it installs anything
    win = tmp_path / "pylock.win.toml"
    win.write_text(
        text.replace(
            "sys_platform == 'linux' and platform_machine == 'x86_64'",
            "sys_platform == 'win32' and platform_machine == 'AMD64'",
        )
        .replace('platform = "linux-64"', 'platform = "win-64"')
        .replace('\\"platform\\": \\"linux-64\\"', '\\"platform\\": \\"win-64\\"')
    )
    venv = tmp_path / "v"
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    res = subprocess.run(
        [
            str(UV),
            "pip",
            "install",
            "--offline",
            "--preview-features",
            "pylock",
            "--python",
            str(venv / "bin" / "python"),
            "-r",
            str(win),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode != 0 and "not supported by the lockfile" in res.stderr
    assert load_locked(win).platform == "win-64"
    refused = gpuenv("install", str(win), "--name", "w")
    assert refused.returncode == 1 and "is for win-64; this machine is linux-64" in refused.stderr


def test_portable_pylock_is_refused_not_ignored(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    with pytest.raises(LockError, match=r"--portable cannot be written as pylock\.toml"):
        make_lock(install_repos, tmp_path / "pylock.toml", jax_plan(), portable=True, **PIP_LOCK)
    assert not (tmp_path / "pylock.toml").exists()


def test_conda_lock_header_is_gpuenvs_own(install_repos: InstallRepos, tmp_path: Path) -> None:
    out = make_lock(
        install_repos,
        tmp_path / "x.conda-lock.yml",
        jax_plan(),
        command="gpuenv lock jax -o x.conda-lock.yml",
    )
    head = out.read_text().split("version: 1", 1)[0]
    assert "conda-lock -f" not in head and "conda-lock lock" not in head
    assert "# Install:     gpuenv install x.conda-lock.yml" in head
    assert "# Regenerate:  gpuenv lock jax -o x.conda-lock.yml" in head
    assert "holds pip packages only" in head  # what other tools can (not) do, honestly
    assert load_locked(out).pip  # still conda-lock's format, read by conda-lock's parser
    portable = make_lock(install_repos, tmp_path / "p.conda-lock.yml", jax_plan(), portable=True)
    assert "only `gpuenv install` finds" in portable.read_text()


def test_a_link_as_output_is_refused(install_repos: InstallRepos, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    for name in ("pylock.toml", "x.conda-lock.yml"):
        (tmp_path / name).symlink_to(victim)
        fmt = "pylock" if name.endswith(".toml") else "conda-lock"
        with pytest.raises(OutputPathError, match="symbolic link"):
            make_lock(install_repos, tmp_path / name, jax_plan(), format=fmt)
    assert victim.read_text() == "keep"


def test_conda_lock_reads_and_renders_a_conda_and_pip_file(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    """What the header claims about conda-lock, tried with the conda-lock gpuenv depends on."""
    plan = jax_plan(conda=("cudatoolkit=11.2",))
    out = make_lock(install_repos, tmp_path / "gpu.conda-lock.yml", plan)
    assert "conda-lock render --kind explicit" in out.read_text()
    res = subprocess.run(
        [str(Path(sys.executable).parent / "conda-lock"), "render", "--kind", "explicit", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    explicit = (tmp_path / "conda-linux-64.lock").read_text()
    locked = load_locked(out)
    for record in locked.conda:
        assert f"{record['url']}#{record['md5']}" in explicit
    for wheel in locked.pip:
        assert f"# pip {wheel.name} @ {wheel.url}#sha256={wheel.sha256}" in explicit


def test_fetch_then_offline_install_of_a_pylock(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "pylock.cpu.toml", jax_plan(), **PIP_LOCK)
    fetched = gpuenv("fetch", str(lockfile), "-d", str(tmp_path / "wh"))
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(p.name for p in (tmp_path / "wh").iterdir() if p.suffix == ".whl") == [
        "jax-0.4.30-py3-none-any.whl",
        "numpy-1.26.4-py3-none-any.whl",
    ]
    done = gpuenv(
        "install", str(lockfile), "--name", "off", "--offline", "--from", str(tmp_path / "wh")
    )
    assert done.returncode == 0, done.stderr
    # it says where the wheels come from: nothing is downloaded (issue 21)
    said = done.stdout + done.stderr
    assert "installing 2 wheels (from local files" in said and "uv downloads" not in said
    again = gpuenv("install", str(lockfile), "--name", "off")
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_install_dry_run_changes_nothing_and_says_what_it_would_do(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    """`install --dry-run` (as setup has, issue 21): the lockfile is read and checked, nothing
    is made or replaced, and the line says new or what it would replace."""
    lockfile = make_lock(install_repos, tmp_path / "pylock.cpu.toml", jax_plan(), **PIP_LOCK)
    where = EnvLocation.named("dry")
    dry = gpuenv("install", str(lockfile), "--name", "dry", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would install jax 0.4.30" in dry.stdout and "(new)" in dry.stdout
    assert not where.link.exists() and where.current() is None
    assert gpuenv("install", str(lockfile), "--name", "dry", "--no-smoke-test").returncode == 0
    other = make_lock(install_repos, tmp_path / "pylock.other.toml", jax_plan("0.4.31"), **PIP_LOCK)
    before = where.current()
    dry = gpuenv("install", str(other), "--name", "dry", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "replacing the environment there (jax 0.4.30" in dry.stdout
    assert where.current() == before
    # the install itself says so too, before it starts (issue 18)
    done = gpuenv("install", str(other), "--name", "dry", "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    assert "replacing the environment there (jax 0.4.30" in done.stdout + done.stderr
