"""An install builds its venv on the interpreter the last install's search found, while its own
search still runs (envs.early_python keeps that answer, python_check.early_guess offers it), and
keeps what it built only if the search names that interpreter again: built again on uv's answer
when it names another, refused with nothing changed when there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpuenv.uv.binary as uv_binary
from gpuenv.envs import early_python
from gpuenv.envs.store import EnvLocation
from installrepos import PY, InstallRepos
from lockdata import in_process, write_for_wheels

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a /bin/sh wrapper around uv")
SEARCH_SECONDS = 2  # the wrapped search's delay: the install's own work fits in it


@pytest.fixture(autouse=True)
def _fresh(fresh_early_python: None) -> None:
    """envs.early_python's program state, cleared for each test (store_fixtures)."""


def _slow_uv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_install: bool = False
) -> tuple[Path, Path]:
    """gpuenv's uv becomes a wrapper that logs when each command starts and ends (and, for a
    venv, the interpreter it is built on); its `python find` answers SEARCH_SECONDS late; with
    `fail_install`, its `pip install` fails."""
    real = uv_binary.find_uv()
    log = tmp_path / "uv-log"
    wrapper = tmp_path / "uv"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'echo "start $*" >> "{log}"\n'
        f'if [ "$2" = find ]; then sleep {SEARCH_SECONDS}; fi\n'
        + ('if [ "$2" = install ]; then echo "no space left" >&2; exit 1; fi\n' * fail_install)
        + f'"{real}" "$@"\nstatus=$?\n'
        f'echo "end $1 $2" >> "{log}"\n'
        "exit $status\n"
    )
    wrapper.chmod(0o755)
    monkeypatch.setattr(uv_binary, "find_uv", lambda: str(wrapper))
    return wrapper, log


def _answer(version: str) -> str:
    """What uv's search answers for `version` here (as the install's search asks it)."""
    done = subprocess.run(
        [uv_binary.find_uv(), "python", "find", "--system", "--no-project", version],
        capture_output=True,
        text=True,
        cwd="/",
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def _remembered(uv: Path, version: str, found: str) -> None:
    """The record an earlier install of the program left: its question and the answer."""
    folder = Path(os.environ["GPUENV_CACHE_DIR"]) / early_python.KIND
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = folder / early_python.NAME
    record.write_text(json.dumps({"uv": str(uv), "python": version, "found": found}))
    record.chmod(0o600)


def _install(repos: InstallRepos, tmp_path: Path, python: str = PY) -> tuple[int, str]:
    """The program's install (its early search started first) of a small pure-wheel lockfile."""
    wheels = [repos.wheels / "jax-0.4.30-py3-none-any.whl"]
    wheels.append(repos.wheels / "numpy-1.26.4-py3-none-any.whl")
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", wheels, python=python)
    early_python.start_early()
    code, _out, err = in_process("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    return code, err


def _log(log: Path) -> list[str]:
    """Each command's start ("start venv DIR on PYTHON" for a venv) and end, in order."""
    events = []
    for line in log.read_text().splitlines():
        words = line.split()
        if words[:2] == ["start", "venv"]:
            line = f"start venv {words[2]} on {words[words.index('--python') + 1]}"
        elif words[0] == "start":
            line = " ".join(words[:3])
        events.append(line.strip())
    return events


def _stand_in_python(tmp_path: Path, body: str) -> str:
    """Another interpreter file than uv's answer: a script that runs `body`."""
    script = tmp_path / "elsewhere" / "python3"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_the_venv_is_built_while_the_search_runs_when_it_names_the_last_answer(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = _answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    uv, log = _slow_uv(tmp_path, monkeypatch)
    _remembered(uv, PY, answer)
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    events = _log(log)
    venvs = [e for e in events if e.startswith("start venv")]
    assert venvs == [f"start venv {EnvLocation.named('lab').current()} on {answer}"]
    # built and filled before uv's search answered
    assert events.index(venvs[0]) < events.index("end python find")
    assert events.index("end pip install") < events.index("end python find")


@pytest.mark.parametrize(
    "body", ['exec "{answer}" "$@"', "exit 3"], ids=["another-python", "no-python-now"]
)
def test_a_venv_built_on_another_interpreter_than_the_search_names_is_built_again(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    """The last answer: another working Python of the version, or a file that is no Python."""
    answer = _answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    stale = _stand_in_python(tmp_path, body.replace("{answer}", answer))
    uv, log = _slow_uv(tmp_path, monkeypatch)
    _remembered(uv, PY, stale)
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    venvs = [e.split()[-1] for e in _log(log) if e.startswith("start venv")]
    assert venvs == [stale, answer]  # the guess, then uv's answer: the one that went live
    kept = Path(os.environ["GPUENV_CACHE_DIR"]) / early_python.KIND / early_python.NAME
    assert json.loads(kept.read_text())["found"] == answer  # what the next install guesses
    location = EnvLocation.named("lab")
    current = location.current()
    assert current is not None
    assert [p for p in location.versions.iterdir() if p.is_dir() and p != current] == []


def test_no_python_for_the_lockfile_refuses_what_was_built_on_the_guess(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last answer still exists, but nothing of the lockfile's version does now (nor may
    uv download it): refused, and nothing of the environment built on the guess is left."""
    uv, log = _slow_uv(tmp_path, monkeypatch)
    _remembered(uv, "3.99", sys.executable)
    code, err = _install(install_repos, tmp_path, python="3.99")
    assert code == 1, err
    assert "needs Python 3.99" in err
    assert any(e.startswith("start venv") for e in _log(log))  # the guess was built on
    location = EnvLocation.named("lab")
    assert location.current() is None
    assert not location.versions.exists() or not any(
        p.is_dir() for p in location.versions.iterdir()
    )


@pytest.mark.parametrize("found", ["/no/such/python3", "{tmp}"], ids=["gone", "a-folder"])
def test_an_answer_that_is_no_file_now_is_not_built_on(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, found: str
) -> None:
    uv, log = _slow_uv(tmp_path, monkeypatch)
    _remembered(uv, PY, found.replace("{tmp}", str(tmp_path)))
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    events = _log(log)
    venv = next(e for e in events if e.startswith("start venv"))
    assert events.index("end python find") < events.index(venv)  # waited for uv's answer


def test_a_build_on_the_right_guess_that_fails_fails_the_install(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv's search names the interpreter built on: the build's own failure is the answer, once,
    and nothing of it is left."""
    answer = _answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    uv, log = _slow_uv(tmp_path, monkeypatch, fail_install=True)
    _remembered(uv, PY, answer)
    code, err = _install(install_repos, tmp_path)
    assert code == 1 and "no space left" in err, err
    assert [e for e in _log(log) if e.startswith("start venv")] != []
    assert len([e for e in _log(log) if e.startswith("start pip")]) == 1  # not built again
    location = EnvLocation.named("lab")
    assert location.current() is None
    assert not any(p.is_dir() for p in location.versions.iterdir())
