"""`gpuenv lock --plan FILE`: a saved Plan is input from elsewhere, checked before it is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _lock_plan(plan_file: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "lock", "--plan", str(plan_file), "-o", "out.lock.yml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "c")},
    )


def _saved_plan(tmp_path: Path, *flags: str) -> dict[str, object]:
    command = ["resolve", "jax", "--no-gpu", "--os", "linux", "--json", *flags]
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", *command],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "c")},
    )
    plan: dict[str, object] = json.loads(done.stdout)
    return plan


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"python": "/tmp/evil/python"}, "never a path"),
        ({"python": "3.12; rm -rf ~"}, "never a path"),
        ({"platform": "../../x"}, "platform is"),
        ({"frameworks": []}, "frameworks"),
        ({"frameworks": {"jax": {"variant": "cpu"}}}, "version"),
        ({"schema": True}, "schema"),
        ({"schema": 1.0}, "schema is 1.0, expected 1"),
    ],
)
def test_a_crafted_plan_file_is_refused_before_locking(
    change: dict[str, object], expected: str, tmp_path: Path
) -> None:
    plan = {**_saved_plan(tmp_path), **change}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    done = _lock_plan(path, tmp_path)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.lock.yml").exists()


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b"[]"])
def test_a_plan_file_that_is_not_a_plan_is_refused(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(content)
    done = _lock_plan(path, tmp_path)
    assert done.returncode == 2 and "--plan" in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_plan_file_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    done = _lock_plan(fifo, tmp_path)
    assert done.returncode == 2 and "not a regular file" in done.stderr


def test_the_plan_resolve_saves_is_accepted(tmp_path: Path) -> None:
    from gpuenv.lock.plan_file import read_plan_file

    saved = _saved_plan(tmp_path, "-v")
    assert "rejected" in saved  # resolve -v explains the other builds; lock ignores that part
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(saved), encoding="utf-8")
    plan = read_plan_file(path)
    assert plan.python == saved["python"] and set(plan.frameworks) == {"jax"}
