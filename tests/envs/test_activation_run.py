"""gpuenv run / activate / cache: using an environment, and the cache, without knowing paths."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.cache import TAG_NAME, tag_cache
from gpuenv.envs.activation import (
    ActivationError,
    activate_hint,
    command_environment,
    detect_shell,
)
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock


@pytest.fixture
def lab_env(install_repos: InstallRepos, tmp_path: Path) -> Path:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    done = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    return lockfile


def test_run_executes_inside_the_environment_and_passes_the_status_on(lab_env: Path) -> None:
    script = "import jax, os, sys; print(os.environ['VIRTUAL_ENV']); print(sys.prefix)"
    shown = gpuenv("run", "-n", "lab", "--", "python", "-c", script)
    assert shown.returncode == 0, shown.stderr
    venv, prefix = (Path(line) for line in shown.stdout.split())
    # the environment's stable link, not the version folder a rebuild replaces (issue 18)
    assert venv.name == "lab" and ".versions" not in venv.parts
    assert prefix.resolve().name.startswith("lab-") and prefix.resolve().parent.name == ".versions"
    failed = gpuenv("run", "-n", "lab", "--", "python", "-c", "raise SystemExit(7)")
    assert failed.returncode == 7


def test_run_hostile_inputs(lab_env: Path) -> None:
    missing = gpuenv("run", "-n", "nope", "--", "python", "-V")
    assert missing.returncode == 2 and "no gpuenv environment" in missing.stderr
    traversal = gpuenv("run", "-n", "../lab", "--", "python", "-V")
    assert traversal.returncode != 0 and "Traceback" not in traversal.stderr
    unknown = gpuenv("run", "-n", "lab", "--", "no-such-program-xyz")
    assert unknown.returncode == 2 and "command not found" in unknown.stderr
    # an option before `--` is an option: refused, never run as the command (issue 21)
    option = gpuenv("run", "--json", "-n", "lab", "--", "python", "-V")
    assert option.returncode == 2 and "No such option '--json'" in option.stderr
    # after the command, options are the command's own
    own = gpuenv("run", "-n", "lab", "python", "-c", "import sys; print(sys.argv[1:])", "--json")
    assert own.returncode == 0 and own.stdout.strip() == "['--json']", own.stderr


def test_activate_hook_for_a_venv_is_evaluated_by_bash(lab_env: Path) -> None:
    hook = gpuenv("activate", "-n", "lab", "--shell", "bash")
    assert hook.returncode == 0, hook.stderr
    assert hook.stdout.startswith("source ") and hook.stdout.strip().endswith("/bin/activate")
    bash = shutil.which("bash")
    assert bash
    out = subprocess.run(
        [bash, "-c", f"{hook.stdout.strip()} && python -c 'import jax, sys; print(sys.prefix)'"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve().parent.name == ".versions"
    # the hook names the stable link: a shell activated before a rebuild keeps working
    assert ".versions" not in hook.stdout and hook.stdout.split()[1].endswith("/lab/bin/activate")
    assert gpuenv("activate", "-n", "lab", "--shell", "elvish").returncode == 2


def test_command_environment_puts_the_environment_first() -> None:
    base = {"PATH": "/usr/bin", "PYTHONHOME": "/elsewhere", "CONDA_PREFIX": "/old"}
    venv = command_environment(Path("/e"), "venv", base, windows=False)
    assert venv["PATH"] == "/e/bin" + os.pathsep + "/usr/bin"
    assert venv["VIRTUAL_ENV"] == "/e" and "PYTHONHOME" not in venv and "CONDA_PREFIX" not in venv
    conda = command_environment(Path("/e"), "conda", {"Path": r"C:\Windows"}, windows=True)
    parts = conda["Path"].split(";")
    assert parts[0] == "/e" and parts[-1] == r"C:\Windows" and len(parts) == 6
    assert conda["CONDA_PREFIX"] == "/e" and "PATH" not in conda
    bare = command_environment(Path("/e"), "venv", {}, windows=False)
    assert bare["PATH"] == "/e/bin"


@pytest.mark.parametrize(
    ("environ", "windows", "expected"),
    [
        ({"SHELL": "/usr/bin/fish"}, False, "fish"),
        ({"SHELL": "/bin/zsh"}, False, "zsh"),
        ({"SHELL": "/bin/tcsh"}, False, "tcsh"),
        ({"SHELL": "/opt/weird/xonsh"}, False, "bash"),
        ({}, False, "bash"),
        ({"PSModulePath": "C:\\x"}, True, "powershell"),
        ({"PSModulePath": "C:\\x", "PROMPT": "$P$G"}, True, "cmd"),
        ({}, True, "cmd"),
    ],
)
def test_detect_shell(environ: dict[str, str], windows: bool, expected: str) -> None:
    assert detect_shell(environ, windows) == expected


@pytest.mark.parametrize(
    ("shell", "backend", "expected"),
    [
        ("bash", "venv", "source /e/bin/activate"),
        ("fish", "venv", "source /e/bin/activate.fish"),
        ("csh", "venv", "source /e/bin/activate.csh"),
        ("pwsh", "venv", "& '/e/bin/activate.ps1'"),
        ("zsh", "conda", 'eval "$(gpuenv activate -n lab --shell zsh)"'),
        (
            "powershell",
            "conda",
            "gpuenv activate -n lab --shell powershell | Out-String | Invoke-Expression",
        ),
        ("tcsh", "conda", "gpuenv run -n lab -- tcsh"),
        ("fish", "conda", "gpuenv activate -n lab --shell fish | source"),
    ],
)
def test_activate_hint_per_shell(shell: str, backend: str, expected: str) -> None:
    assert activate_hint(Path("/e"), backend, shell, "lab") == expected


def test_activate_hint_refuses_an_unknown_shell() -> None:
    with pytest.raises(ActivationError, match="unknown shell"):
        activate_hint(Path("/e"), "venv", "sh; rm -rf /", "lab")


def test_cache_dir_size_and_clean(lab_env: Path) -> None:
    root = Path(gpuenv("cache", "dir").stdout.strip())
    assert root == Path(os.environ["GPUENV_CACHE_DIR"])
    sized = gpuenv("cache", "size", "--json")
    assert sized.returncode == 0, sized.stderr
    assert '"uv"' in sized.stdout  # the wheels are in uv's cache now, not in gpuenv's
    outside = root.parent / "keep-me"
    outside.mkdir(exist_ok=True)
    (outside / "data.txt").write_text("mine")
    tag_cache(root)  # a venv install writes nothing here: uv's cache holds its wheels
    (root / "artifacts").symlink_to(outside)  # a kind gpuenv writes, planted as a link
    dry = gpuenv("cache", "clean", "--dry-run")
    assert dry.returncode == 0 and "would free" in dry.stdout and (root / "artifacts").is_symlink()
    cleaned = gpuenv("cache", "clean")
    assert cleaned.returncode == 0, cleaned.stderr
    assert [p.name for p in root.iterdir()] in ([], [TAG_NAME])
    assert (outside / "data.txt").read_text() == "mine"  # a link is removed, never followed
    # the environment does not live in the cache: it still runs
    assert gpuenv("run", "-n", "lab", "--", "python", "-c", "import jax").returncode == 0


def test_cache_clean_refuses_a_folder_that_is_not_gpuenvs(tmp_path: Path) -> None:
    home = tmp_path / "someones-home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    out = gpuenv("cache", "clean", env={"GPUENV_CACHE_DIR": str(home)})
    assert out.returncode == 2 and "nothing was removed" in out.stderr
    assert (home / "thesis.tex").read_text() == "years of work"


def test_activate_hook_for_a_conda_prefix_comes_from_rattler(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(
        install_repos, tmp_path / "conda.lock.yml", jax_plan(conda=("cudatoolkit=11.2",))
    )
    env = tmp_path / "env"
    done = gpuenv("install", str(lockfile), "--prefix", str(env), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    hook = gpuenv("activate", "--prefix", str(env), "--shell", "bash")
    assert hook.returncode == 0, hook.stderr
    assert "CONDA_PREFIX" in hook.stdout
    bash = shutil.which("bash")
    assert bash
    out = subprocess.run(
        [bash, "-c", hook.stdout + '\npython -c "import jax, sys; print(sys.prefix)"'],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == env.resolve()
    hint = gpuenv("activate", "--prefix", str(env), "--shell", "fish", "--hint")
    assert hint.stdout.strip() == f"gpuenv activate --prefix {env} --shell fish | source"


def test_verbose_shows_each_uv_command_and_quiet_silences_progress(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    loud = gpuenv("-v", "install", str(lockfile), "--name", "loud", "--no-smoke-test")
    assert loud.returncode == 0, loud.stderr
    ran = [line for line in loud.stderr.splitlines() if line.startswith("gpuenv: running: ")]
    assert any(" venv " in line for line in ran) and any(" pip install " in line for line in ran)
    quiet = gpuenv("-q", "install", str(lockfile), "--name", "quiet", "--no-smoke-test")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_relative_gpuenv_home_makes_an_environment_that_works_from_anywhere(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "GPUENV_HOME": "rel-home"}
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", "install", str(lockfile), "-n", "lab", "--no-smoke-test"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "rel-home").mkdir(parents=True)  # the same relative name means nothing there
    env["GPUENV_HOME"] = str(work / "rel-home")
    shown = subprocess.run(
        [sys.executable, "-m", "gpuenv", "run", "-n", "lab", "--", "python", "-c", "import jax"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
