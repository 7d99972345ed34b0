"""`gpuenv lock` starts uv before resolving, on the request its command line made last time
(lock.last_request), and keeps that run only when it is this run's request: a wrong guess
costs a stopped uv process, and the lockfile is the one a lock without the guess writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.lock import last_request
from localrepos import build_simple_index, jax_for_windows

FLAGS = ["jax", "--no-gpu", "--os", "windows", "--python", "3.11", "--exclude-newer", "none"]


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two indexes with the same jax: a lock from either plans the same, uv's request differs."""
    root = tmp_path_factory.mktemp("last-request")
    built = jax_for_windows(root / "wheels")
    return build_simple_index(root / "a", built), build_simple_index(root / "b", built)


def lock(folder: Path, index: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """`gpuenv -v lock` run in `folder` (the command line is the same wherever it runs from)."""
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "-v", "lock", *FLAGS, *extra, "-o", "env.lock.yml"],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull},
        timeout=120,
    )


def uv_runs(result: subprocess.CompletedProcess[str]) -> int:
    return sum(" pip compile " in line for line in result.stderr.splitlines())


def body(path: Path) -> str:
    """The lockfile without its header comments (they name the time it was made)."""
    return "\n".join(line for line in path.read_text().splitlines() if not line.startswith("#"))


def test_the_same_command_line_starts_uv_on_its_last_request(
    tmp_path: Path, two_indexes: tuple[str, str]
) -> None:
    first = lock(tmp_path, two_indexes[0])
    assert first.returncode == 0, first.stderr
    assert uv_runs(first) == 1
    stored = list((Path(os.environ["GPUENV_CACHE_DIR"]) / last_request.KIND).glob("*.marshal"))
    assert stored and all((p.stat().st_mode & 0o077) == 0 for p in stored)
    locked = body(tmp_path / "env.lock.yml")
    again = lock(tmp_path, two_indexes[0])
    assert again.returncode == 0, again.stderr
    # one uv run, the one started first thing, and the same lockfile
    assert uv_runs(again) == 1
    assert "running (started first, as last time):" in again.stderr
    assert body(tmp_path / "env.lock.yml") == locked


def test_a_wrong_guess_is_stopped_and_the_lock_is_the_one_made_without_it(
    tmp_path: Path, two_indexes: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two_indexes
    assert lock(tmp_path, a).returncode == 0
    guessed_wrong = lock(tmp_path, b)  # the same command line, another index: another request
    assert guessed_wrong.returncode == 0, guessed_wrong.stderr
    # the run started first (on index a's request) is stopped; uv runs on this one
    assert "differs from its last run's" in guessed_wrong.stderr
    assert uv_runs(guessed_wrong) == 1 and "started first" not in guessed_wrong.stderr
    with_guess = body(tmp_path / "env.lock.yml")
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "fresh-cache"))
    (tmp_path / "env.lock.yml").unlink()
    without = lock(tmp_path, b)
    assert uv_runs(without) == 1
    assert body(tmp_path / "env.lock.yml") == with_guess


def test_a_command_line_and_its_folder_make_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request per command line and folder: a key is stable, and changes with either."""
    monkeypatch.chdir(tmp_path)
    key = last_request.command_key(["lock", "jax"])
    assert key == last_request.command_key(["lock", "jax"])
    assert key.isalnum() and len(key) <= 32  # a file name in the cache, never a path
    others = {
        last_request.command_key(["lock", "jax", "--no-gpu"]),
        last_request.command_key(["lock", "jaxx"]),
        last_request.command_key(["lock", "ja", "x"]),  # the same letters, split otherwise
    }
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    others.add(last_request.command_key(["lock", "jax"]))
    assert key not in others and len(others) == 4
