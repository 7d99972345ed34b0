"""`gpuenv envs clean` removes the work folders of killed locks and installs, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

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
