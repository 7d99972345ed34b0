"""uv's search for the lockfile's Python starts before gpuenv parses the lockfile (from a hint in
its text) and is answered when the install needs it: used only when the parsed file names the
same version, stopped when the install stops first, never left running."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import gpuenv.envs.python_check as python_check
import gpuenv.lock.load as load_module
import gpuenv.uv.binary as uv_binary
from gpuenv.envs.python_check import PythonLookup, check_python_available, python_hint
from gpuenv.envs.store import EnvLocation
from gpuenv.lock.load import load_locked
from installrepos import PY, InstallRepos
from isolation import record_uv_calls
from lockdata import dump, in_process, load, write_for_wheels, write_valid

REPO = Path(__file__).resolve().parents[2]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="a /bin/sh stand-in for uv")


def _lockfile(install_repos: InstallRepos, path: Path, python: str = PY) -> Path:
    wheels = [install_repos.wheels / "jax-0.4.30-py3-none-any.whl"]
    wheels.append(install_repos.wheels / "numpy-1.26.4-py3-none-any.whl")
    return write_for_wheels(path, wheels, python=python)


def _uv(tmp_path: Path, find_body: str) -> str:
    """A uv whose `python find` runs `find_body` (sh); it records each call and its pid."""
    script = tmp_path / "uv"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$$ $@" >> "{tmp_path / "calls"}"\n'
        f'if [ "$2" = find ]; then\n  {find_body}\nfi\n'
        "echo '[]'\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def _calls(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "calls"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def _ended(lookup: PythonLookup) -> bool:
    """The lookup's uv has exited and been waited for (no process, no zombie left)."""
    proc = lookup._proc
    return proc is not None and proc.returncode is not None and _gone(proc.pid)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --- the hint -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lockfile", sorted((REPO / "lockfiles").glob("*.yml")), ids=str)
def test_the_hint_is_the_python_of_every_committed_lockfile(lockfile: Path) -> None:
    locked = load_locked(lockfile)
    assert python_hint(lockfile.read_bytes()) == (None if locked.conda else locked.python)


def test_the_hint_of_a_lockfile_gpuenv_writes(tmp_path: Path) -> None:
    raw = write_valid(tmp_path / "v.lock.yml").read_bytes()
    assert python_hint(raw) == load_locked(tmp_path / "v.lock.yml").python == "3.12"
    assert python_hint(raw.replace(b"\n", b"\r\n")) == "3.12"
    assert python_hint(write_valid(tmp_path / "c.lock.yml", conda=True).read_bytes()) is None


@pytest.mark.parametrize(
    "line",
    [
        b"    gpuenv.python: '../../bin/sh'",
        b"    gpuenv.python: '3.11; rm -rf ~'",
        b"    gpuenv.python: '3.11.7'",
        b"    gpuenv.python: '3.11\"",
        b"    gpuenv.python: --python=/tmp/evil",
        b"gpuenv.python: '3.11'",  # not inside the metadata
        b"    gpuenv.python: '3.11'\n    gpuenv.python: '3.10'",  # which one?
        b"",
    ],
)
def test_a_hint_is_x_y_or_nothing(line: bytes) -> None:
    raw = b"version: 1\nmetadata:\n  custom_metadata:\n" + line + b"\npackage: []\n"
    assert python_hint(raw) is None
    assert python_hint(b"\xff\xfe" + bytes(range(256)) * 64) is None


# --- the lookup ---------------------------------------------------------------------------------


@posix_only
def test_a_lookup_answers_what_uv_found(tmp_path: Path) -> None:
    uv = _uv(tmp_path, f"echo {sys.executable}; exit 0")
    with PythonLookup(uv, "3.9") as lookup:
        assert lookup.answer() == sys.executable
    assert [c[1:] for c in _calls(tmp_path)] == [
        ["python", "find", "--system", "--no-project", "3.9"]
    ]


@posix_only
@pytest.mark.parametrize("body", ["exit 2", "exit 0", "echo; exit 0", "echo /x; exit 1"])
def test_a_lookup_that_found_nothing_answers_none(tmp_path: Path, body: str) -> None:
    assert PythonLookup(_uv(tmp_path, body), "3.9").answer() is None


def test_a_lookup_without_a_version_or_uv_starts_nothing(tmp_path: Path) -> None:
    assert PythonLookup(str(tmp_path / "no-uv"), None).answer() is None
    assert PythonLookup(str(tmp_path / "no-uv"), "3.9").answer() is None  # uv cannot start
    assert not (tmp_path / "calls").exists()


@posix_only
def test_a_hanging_lookup_is_killed_on_timeout_and_on_leaving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv = _uv(tmp_path, "exec sleep 60")
    monkeypatch.setattr(python_check, "UV_QUERY_TIMEOUT", 0.5)
    start = time.monotonic()
    timed_out = PythonLookup(uv, "3.9")
    assert timed_out.answer() is None
    with PythonLookup(uv, "3.10") as left:
        pass  # not answered: stopped on leaving
    assert time.monotonic() - start < 30
    assert _ended(timed_out) and _ended(left)


@posix_only
def test_a_lookup_for_another_version_or_uv_is_not_used(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(python_check, "_discovered", lambda version: None)
    locked = load_locked(_lockfile(install_repos, tmp_path / "a.lock.yml", python="3.9"))
    uv = _uv(tmp_path, f'[ "$5" = 3.9 ] && echo {sys.executable} && exit 0; exit 2')
    (tmp_path / "other").mkdir()
    other_uv = _uv(tmp_path / "other", f"echo {sys.executable}; exit 0")
    for lookup in (PythonLookup(uv, "3.10"), PythonLookup(other_uv, "3.9")):
        assert check_python_available(locked, uv=uv, offline=True, lookup=lookup) == Path(
            sys.executable
        )
    # each time uv itself is asked again, for the lockfile's version (the wrong lookup for
    # 3.10 may be stopped before it even logs its call)
    finds = [c[-1] for c in _calls(tmp_path) if c[2] == "find" and c[-1] != "3.10"]
    assert finds == ["3.9", "3.9"]


# --- install ------------------------------------------------------------------------------------


@posix_only
def test_install_starts_the_lookup_before_it_parses_and_uses_its_answer(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv_calls = record_uv_calls(monkeypatch, tmp_path)
    events: list[str] = []
    real_init, real_load = PythonLookup.__init__, load_module.load_locked

    def init(self: PythonLookup, uv: str, version: Any) -> None:
        events.append(f"lookup {version}")
        real_init(self, uv, version)

    def load_locked(*args: Any) -> Any:
        events.append("parse")
        return real_load(*args)

    monkeypatch.setattr(PythonLookup, "__init__", init)
    monkeypatch.setattr(load_module, "load_locked", load_locked)
    lockfile = _lockfile(install_repos, tmp_path / "a.lock.yml")
    code, _out, err = in_process("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert code == 0, err
    assert events == [f"lookup {PY}", "parse"]
    calls = [line.split()[:2] for line in uv_calls.read_text().splitlines()]
    assert calls == [
        ["python", "find"],
        ["venv", str(EnvLocation.named("lab").current())],
        [
            "pip",
            "install",
        ],
    ]  # one search, as before, and the venv built on what it found
    assert EnvLocation.named("lab").current() is not None


@posix_only
def test_an_install_that_stops_leaves_no_lookup_running(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text names a Python, but the file is refused when parsed: the search is stopped."""
    monkeypatch.setattr(uv_binary, "find_uv", lambda: _uv(tmp_path, "exec sleep 60"))
    lookups: list[PythonLookup] = []
    real_init = PythonLookup.__init__

    def init(self: PythonLookup, uv: str, version: Any) -> None:
        lookups.append(self)
        real_init(self, uv, version)

    monkeypatch.setattr(PythonLookup, "__init__", init)
    lockfile = _lockfile(install_repos, tmp_path / "a.lock.yml")
    data = load(lockfile)
    data["package"][0]["url"] = "https://files.example/p/jax-0.4.30.tar.gz"  # an sdist
    dump(data, lockfile)
    assert python_hint(lockfile.read_bytes()) == PY
    start = time.monotonic()
    code, _out, err = in_process("install", str(lockfile), "--name", "lab")
    assert code == 2 and "gpuenv installs wheels only" in err
    assert time.monotonic() - start < 30
    assert len(lookups) == 1 and _ended(lookups[0])
    assert EnvLocation.named("lab").current() is None


def test_a_no_op_install_starts_no_lookup(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lockfile = _lockfile(install_repos, tmp_path / "a.lock.yml")
    code, _out, err = in_process("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert code == 0, err
    started: list[object] = []
    monkeypatch.setattr(PythonLookup, "__init__", lambda *a: started.append(a))
    code, out, err = in_process("install", str(lockfile), "--name", "lab")
    assert code == 0 and "nothing to do" in out, err
    assert started == []


@posix_only
def test_a_conda_lockfile_never_waits_on_a_lookup(tmp_path: Path) -> None:
    """Its conda packages bring the Python: a lookup handed in anyway is stopped, not awaited."""
    locked = load_locked(write_valid(tmp_path / "c.lock.yml", conda=True))
    lookup = PythonLookup(_uv(tmp_path, "exec sleep 60"), locked.python)
    start = time.monotonic()
    with pytest.raises(python_check.PythonUnavailable, match="no python among them"):
        check_python_available(locked, uv=lookup.uv, lookup=lookup)
    assert time.monotonic() - start < 30 and _ended(lookup)


def test_install_reaches_uv_without_the_lockfile_stack(tmp_path: Path) -> None:
    """What install imports before it starts uv's search is all that runs before it: not the
    lock pipeline, the resolver, the knowledge base or the YAML parser (they load meanwhile)."""
    lockfile = REPO / "lockfiles" / "cpu-only.conda-lock.yml"
    heavy = (
        "gpuenv.lock.pipeline",
        "gpuenv.lock.conda_lock.read",
        "gpuenv.lock.pypi",
        "gpuenv.resolve",
        "gpuenv.recipes",
        "yaml",
        "requests",
    )
    code = (
        "import subprocess, sys\n"
        "import gpuenv.envs.python_check as python_check\n"
        "def stop(self, uv, version):\n"
        f"    print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "python_check.PythonLookup.__init__ = stop\n"
        "from gpuenv.cli import main\n"
        f"main(['install', {str(lockfile)!r}, '--prefix', {str(tmp_path / 'env')!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert not (tmp_path / "env").exists()
