"""The Python search `gpuenv install` starts before anything else (envs.early_python): only the
user's own record of the last install's question starts anything, only exactly the shape
gpuenv writes, and a search for another question is stopped, never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuenv.envs import early_python


@pytest.fixture(autouse=True)
def _fresh(fresh_early_python: None) -> None:
    """envs.early_python's program state, cleared for each test (store_fixtures)."""


def _fake_uv(tmp_path: Path, answer: str = "/usr/bin/python3.11", delay: float = 0) -> Path:
    """A uv that records each run's arguments (one file per run) and prints `answer`."""
    script = tmp_path / "uv.sh"
    runs = tmp_path / "runs"
    runs.mkdir(exist_ok=True)
    script.write_text(
        f'#!/bin/sh\necho "$@" > {runs}/$$\nsleep {delay}\necho {answer}\ntouch {tmp_path}/done\n'
    )
    script.chmod(0o755)
    return script


def _record(data: object, mode: int = 0o600) -> Path:
    folder = Path(os.environ["GPUENV_CACHE_DIR"]) / early_python.KIND
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    path = folder / early_python.NAME
    path.write_text(json.dumps(data))
    path.chmod(mode)
    return path


def _runs(tmp_path: Path) -> list[str]:
    deadline = time.monotonic() + 5
    while not any((tmp_path / "runs").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p.read_text().strip() for p in (tmp_path / "runs").iterdir()]


def test_the_users_own_question_is_asked_first_and_answered(tmp_path: Path) -> None:
    uv = _fake_uv(tmp_path)
    _record({"uv": str(uv), "python": "3.11"})
    early_python.start_early()
    assert early_python._early is not None  # started before any lockfile was read
    found = early_python.lookup(str(uv), "3.11").answer()
    assert found == "/usr/bin/python3.11"
    assert _runs(tmp_path) == ["python find --system --no-project 3.11"]  # asked once


def test_another_question_stops_the_early_search_and_is_remembered(tmp_path: Path) -> None:
    uv = _fake_uv(tmp_path, delay=1)
    path = _record({"uv": str(uv), "python": "3.10"})
    early_python.start_early()
    assert early_python._early is not None
    started = early_python._early[2]
    lookup = early_python.lookup(str(uv), "3.11")
    assert started.poll() is not None  # the 3.10 search was stopped, not left running
    lookup.cancel()
    time.sleep(1.3)
    assert not (tmp_path / "done").exists()  # neither search ran to its end
    assert json.loads(path.read_text()) == {"uv": str(uv), "python": "3.11"}  # next time's


def test_a_library_caller_remembers_nothing(tmp_path: Path) -> None:
    """Only the program remembers: an importer of gpuenv writes no record."""
    uv = _fake_uv(tmp_path)
    early_python.lookup(str(uv), "3.11").cancel()
    assert not (Path(os.environ["GPUENV_CACHE_DIR"]) / early_python.KIND).exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("mode", [0o620, 0o602], ids=["group-writable", "world-writable"])
def test_a_record_others_can_write_never_runs(tmp_path: Path, mode: int) -> None:
    uv = _fake_uv(tmp_path)
    _record({"uv": str(uv), "python": "3.11"}, mode)
    early_python.start_early()
    assert early_python._early is None
    assert not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize(
    "data",
    [
        {"uv": "uv", "python": "3.11"},  # not an absolute path: whatever PATH finds
        {"uv": "{uv}", "python": "--help"},  # an option, not a version
        {"uv": "{uv}", "python": "3.11 --managed-python"},
        {"uv": "{uv}", "python": "3"},
        {"uv": "{uv}", "python": 3.11},
        {"uv": ["{uv}"], "python": "3.11"},
        {"uv": "{uv}", "python": "3.11", "args": ["--x"]},
        {"uv": "{uv}"},
        {"uv": "{uv}", "python": "3.11", "found": "bin/python3.11"},  # relative: the folder's
        {"uv": "{uv}", "python": "3.11", "found": ["/usr/bin/python3.11"]},
        {"uv": "{uv}", "python": "3.11", "found": None},
        {"uv": "{uv}", "python": "3.11", "found": "/usr/bin/python3.11", "more": 1},
        ["{uv}", "3.11"],
        "text",
    ],
    ids=repr,
)
def test_any_other_shape_starts_nothing(tmp_path: Path, data: object) -> None:
    uv = _fake_uv(tmp_path)
    _record(json.loads(json.dumps(data).replace("{uv}", str(uv))))
    early_python.start_early()
    assert early_python._early is None
    assert not any((tmp_path / "runs").iterdir())


def test_a_broken_record_starts_nothing(tmp_path: Path) -> None:
    path = _record({})
    for content in (b"", b"{not json", b"\xff\xfe", b"x" * (early_python.MAX_BYTES + 1)):
        path.write_bytes(content)
        early_python.start_early()
        assert early_python._early is None


def test_the_program_starts_the_search_before_the_install_stack(tmp_path: Path) -> None:
    """What is imported by the time the search runs delays it: os, json and subprocess."""
    uv = _fake_uv(tmp_path)
    _record({"uv": str(uv), "python": "3.11"})
    heavy = ("pathlib", "dataclasses", "yaml", "gpuenv.envs.python_check", "gpuenv.lock.load")
    code = (
        "import sys\n"
        "from gpuenv.envs import early_python\nearly_python.start_early()\n"
        "assert early_python._early is not None\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "early_python.cancel_unclaimed()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=os.getcwd()
    )
    assert done.stdout.strip() == "[]"


def test_a_relative_uv_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative path would run whatever the working folder holds under that name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bin").mkdir()
    _fake_uv(tmp_path).rename(tmp_path / "bin" / "uv")
    _record({"uv": "bin/uv", "python": "3.11"})
    early_python.start_early()
    assert early_python._early is None


def test_an_unchanged_question_is_not_written_again(tmp_path: Path) -> None:
    """A record whose uv could not start (gone since) names the same question: kept as it is."""
    uv = tmp_path / "not-executable"
    uv.write_text("")
    path = _record({"uv": str(uv), "python": "3.11"})
    before = path.stat().st_ino, path.stat().st_mtime_ns
    early_python.start_early()
    assert early_python._early is None
    early_python.lookup(str(uv), "3.11").cancel()
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == before


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_stopping_the_search_stops_what_it_started(tmp_path: Path) -> None:
    """uv's search runs pyenv's shims: stopping it must not leave them running."""
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "uv.sh"
    script.write_text(f"#!/bin/sh\nsleep 20 &\necho $! > {pid_file}\nwait\n")
    script.chmod(0o755)
    _record({"uv": str(script), "python": "3.11"})
    early_python.start_early()
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(pid_file.read_text())
    started = time.monotonic()
    early_python.cancel_unclaimed()
    # at once: a child left alive would hold the search's output open, and the stop (and so
    # the install's exit) would wait for it
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        os.kill(child, 9)
        pytest.fail("the search's own child outlived it")


def test_the_programs_setup_starts_no_search_but_offers_the_last_answer(tmp_path: Path) -> None:
    """setup's no-op (the common case) must not pay for a search; its install may guess."""
    from gpuenv import _entry

    uv = _fake_uv(tmp_path)
    _record({"uv": str(uv), "python": "3.11", "found": "/usr/bin/python3.11"})
    assert early_python.last_answer(str(uv), "3.11") is None  # a library caller: never read
    _entry._start_early("setup", ["setup"])
    assert early_python._early is None
    assert early_python.last_answer(str(uv), "3.11") == "/usr/bin/python3.11"
    assert early_python.last_answer(str(uv), "3.10") is None  # another question's answer
    assert not any((tmp_path / "runs").iterdir())
