"""`gpuenv envs clean` removes the work folders of killed locks and installs, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuenv.fs.workdir import checked_work_root
from installrepos import gpuenv


def test_clean_removes_a_killed_runs_work_folder_only(tmp_path: Path) -> None:
    root = checked_work_root()
    dead = root / "lock-999999999-abc"
    (dead / "sub").mkdir(parents=True)
    live = root / f"install-{os.getpid()}-def"  # this test's own process: still running
    live.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    (root / "lock-999999998-lnk").symlink_to(outside)
    done = gpuenv("envs", "clean")
    assert done.returncode == 0, done.stderr
    assert "killed run's work folder" in done.stdout
    assert not dead.exists() and live.is_dir()
    assert (outside / "keep").read_text() == "x" and (root / "lock-999999998-lnk").is_symlink()


def test_clean_leaves_entries_not_named_kind_pid_random(tmp_path: Path) -> None:
    """Only `<kind>-<pid>-<random>` folders are work folders: a name with no random part, and
    one whose pid no process can have (too large for the system), are left alone."""
    root = checked_work_root()
    dead = root / "lock-999999999-abc"
    unnamed = root / "notes-999999999"
    huge = root / "lock-99999999999999999999999-abc"
    for folder in (dead, unnamed, huge):
        folder.mkdir()
    done = gpuenv("envs", "clean")
    assert done.returncode == 0, done.stderr
    assert not dead.exists()
    assert unnamed.is_dir() and huge.is_dir()


def test_clean_leaves_the_folder_of_another_live_process() -> None:
    """That run is alive: its folder stays, and asking whether it runs never signals it."""
    import subprocess
    import sys

    # a process that answers each line on stdin with the signals it got so far (a signal
    # that arrived before the line is handled before the answer)
    child = (
        "import signal, sys\n"
        "got = []\n"
        "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):\n"
        "    signal.signal(s, lambda signum, frame: got.append(signum))\n"
        "for line in sys.stdin:\n"
        "    print(f'signals {got}', flush=True)\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert other.stdin is not None and other.stdout is not None
    try:
        other.stdin.write("?\n")
        other.stdin.flush()
        assert other.stdout.readline() == "signals []\n"  # it runs, its handlers are set
        live = checked_work_root() / f"install-{other.pid}-abc"
        live.mkdir()
        done = gpuenv("envs", "clean")
        assert done.returncode == 0, done.stderr
        assert live.is_dir()
        other.stdin.write("?\n")
        other.stdin.flush()
        assert other.stdout.readline() == "signals []\n"
    finally:
        other.kill()
        other.wait()


def test_the_work_folder_is_made_with_its_missing_parents_for_this_user_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "new" / "home"))
    root = checked_work_root()
    assert root.is_dir() and root.parent == tmp_path / "new" / "home"
    assert root.stat().st_mode & 0o777 == 0o700


def test_clean_removes_the_folder_of_a_run_that_has_exited() -> None:
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    dead = checked_work_root() / f"lock-{child.pid}-abc"
    dead.mkdir()
    done = gpuenv("envs", "clean")
    assert done.returncode == 0, done.stderr
    assert not dead.exists()


def test_clean_in_a_store_without_a_work_folder_has_nothing_to_do() -> None:
    from gpuenv.fs.workdir import work_root

    assert not work_root().exists()
    done = gpuenv("envs", "clean")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "nothing to clean\n"


def test_a_work_folder_that_cannot_be_made_says_why_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from gpuenv.fs.workdir import WorkdirError

    (tmp_path / "home").write_text("a file where GPUENV_HOME should be a folder\n")
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    with pytest.raises(WorkdirError) as err:
        checked_work_root()
    assert str(err.value).startswith(f"cannot make gpuenv's work folder {tmp_path / 'home'}")
    assert str(err.value).endswith(": File exists") and "[Errno" not in str(err.value)
