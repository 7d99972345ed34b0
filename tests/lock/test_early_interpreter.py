"""The `gpuenv` program's lock has uv look at the interpreter it names while gpuenv plans, where
no uv run on the command line's last request does (lock.early_interpreter), and waits for that
look rather than have its own uv run make it again; the lock's program also freezes what it
made before uv answers (last_request.freeze_what_lasts), a library caller's lock never."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from gpuenv import output
from gpuenv.lock import early_interpreter
from gpuenv.lock.last_request import freeze_what_lasts
from gpuenv.uv.binary import find_uv
from localrepos import build_simple_index, jax_for_windows

FLAGS = ["jax", "--no-gpu", "--os", "windows", "--python", "3.11", "--exclude-newer", "none"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("early-interpreter")
    return build_simple_index(root / "index", jax_for_windows(root / "wheels"))


def lock(
    folder: Path, index: str, uv_cache: Optional[Path] = None, *flags: str
) -> subprocess.CompletedProcess[str]:
    """The program's `gpuenv -v lock` with `flags` (default: writing env.lock.yml), with its
    own uv cache where one is given."""
    cache = {"UV_CACHE_DIR": str(uv_cache)} if uv_cache is not None else {}
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "-v", "lock", *FLAGS, *(flags or ["-o", "env.lock.yml"])],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull, **cache},
        timeout=120,
    )


def test_the_program_has_uv_look_at_its_interpreter_first(tmp_path: Path, index: str) -> None:
    cache = tmp_path / "uv-cache"
    first = lock(tmp_path, index, cache)
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    look = [i for i, line in enumerate(lines) if " python find --no-project " in line]
    compile_ = [i for i, line in enumerate(lines) if " pip compile " in line]
    assert len(look) == 1 and len(compile_) == 1 and look[0] < compile_[0]
    assert "ran first, while gpuenv planned (exit 0)" in lines[look[0]]
    assert lines[look[0]].endswith(sys.executable)  # the interpreter the lock names (--python)
    assert f"--python {sys.executable}" in lines[compile_[0]]
    # the same command line again: uv starts on its last request, which looks itself
    again = lock(tmp_path, index, cache)
    assert again.returncode == 0, again.stderr
    assert "started first, as last time" in again.stderr
    assert " python find " not in again.stderr


def test_a_look_is_stopped_when_the_lock_fails_before_uv(tmp_path: Path, index: str) -> None:
    done = lock(tmp_path, index, None, "--gpu", "1.0")
    assert done.returncode != 0 and " pip compile " not in done.stderr
    assert "stopped (the command ended before the lock ran uv)" in done.stderr


def test_a_library_caller_never_looks(
    tmp_path: Path, index: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from gpuenv.cli import cli

    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.chdir(tmp_path)
    frozen = gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["-v", "lock", *FLAGS, "-o", "env.lock.yml"])
    assert result.exit_code == 0, result.output
    assert " python find " not in result.output
    assert gc.get_freeze_count() == frozen  # what it made stays collectable


def test_the_programs_lock_freezes_what_it_made_before_uv_answers(
    tmp_path: Path, index: str
) -> None:
    script = (  # the count once uv answered (the program freezes everything at its end)
        "import gc, sys\n"
        "from gpuenv._entry import main\n"
        "from gpuenv.lock.pypi import PipCompile\n"
        "result = PipCompile.result\n"
        "def counted(self):\n"
        "    answer = result(self)\n"
        "    print('frozen', gc.get_freeze_count())\n"
        "    return answer\n"
        "PipCompile.result = counted\n"
        f"sys.argv = ['gpuenv', 'lock', *{FLAGS!r}, '-o', 'env.lock.yml']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split("frozen")[1].split()[0]) > 10_000  # modules, knowledge base


def test_freezing_is_the_programs_alone() -> None:
    frozen = gc.get_freeze_count()
    freeze_what_lasts()
    assert gc.get_freeze_count() == frozen


@pytest.fixture
def verbose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "_level", output.VERBOSE)


def test_a_look_with_another_uv_is_stopped_not_waited_for(
    verbose: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = tmp_path / "uv"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    early_interpreter.start_early(str(slow))
    look = early_interpreter._look
    assert look is not None
    early_interpreter.settle(find_uv())
    assert look[1].returncode is not None  # stopped, at once
    assert "stopped (the lock runs another uv)" in capsys.readouterr().err


def test_a_look_past_its_wait_is_stopped(
    verbose: None,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = tmp_path / "uv"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(early_interpreter, "WAIT_S", 0.2)
    early_interpreter.start_early(str(slow))
    look: Any = early_interpreter._look
    early_interpreter.settle(str(slow))
    assert look[1].returncode is not None
    assert "stopped (not done within 0.2 s)" in capsys.readouterr().err


def test_no_uv_beside_the_interpreter_no_look(tmp_path: Path) -> None:
    early_interpreter.start_early(str(tmp_path / "no-uv-here"))
    assert early_interpreter._look is None
    early_interpreter.stop()  # nothing to stop
