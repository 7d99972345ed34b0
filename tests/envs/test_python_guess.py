"""An install builds its venv on the interpreter the last install's search found, while its own
search still runs (envs.early_python keeps that answer, python_check.python_to_build_on offers
it), and keeps what it built only if the search names that interpreter again: built again on
uv's answer when it names another, refused with nothing changed when there is none."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from gpuenv.envs import early_python
from gpuenv.envs.store import EnvLocation
from installrepos import PY, InstallRepos
from lockdata import in_process, write_for_wheels
from slow_uv import remembered, search_answer, slow_uv, stand_in_python, uv_events

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a /bin/sh wrapper around uv")


@pytest.fixture(autouse=True)
def _fresh(fresh_early_python: None) -> None:
    """envs.early_python's program state, cleared for each test (store_fixtures)."""


def _install(repos: InstallRepos, tmp_path: Path, python: str = PY) -> tuple[int, str]:
    """The program's install (its early search started first) of a small pure-wheel lockfile."""
    wheels = [repos.wheels / "jax-0.4.30-py3-none-any.whl"]
    wheels.append(repos.wheels / "numpy-1.26.4-py3-none-any.whl")
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", wheels, python=python)
    early_python.start_early()
    code, _out, err = in_process("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    return code, err


def test_the_venv_is_built_while_the_search_runs_when_it_names_the_last_answer(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = search_answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    uv, log = slow_uv(tmp_path, monkeypatch)
    remembered(uv, PY, answer)
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    events = uv_events(log)
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
    answer = search_answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    stale = stand_in_python(tmp_path, body.replace("{answer}", answer))
    uv, log = slow_uv(tmp_path, monkeypatch)
    remembered(uv, PY, stale)
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    venvs = [e.split()[-1] for e in uv_events(log) if e.startswith("start venv")]
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
    uv, log = slow_uv(tmp_path, monkeypatch)
    remembered(uv, "3.99", sys.executable)
    code, err = _install(install_repos, tmp_path, python="3.99")
    assert code == 1, err
    assert "needs Python 3.99" in err
    assert any(e.startswith("start venv") for e in uv_events(log))  # the guess was built on
    location = EnvLocation.named("lab")
    assert location.current() is None
    assert not location.versions.exists() or not any(
        p.is_dir() for p in location.versions.iterdir()
    )


@pytest.mark.parametrize(
    "found", ["/no/such/python3", "{tmp}", os.devnull], ids=["gone", "a-folder", "a-device"]
)
def test_an_answer_that_is_no_file_now_is_not_built_on(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, found: str
) -> None:
    uv, log = slow_uv(tmp_path, monkeypatch)
    remembered(uv, PY, found.replace("{tmp}", str(tmp_path)))
    code, err = _install(install_repos, tmp_path)
    assert code == 0, err
    events = uv_events(log)
    venv = next(e for e in events if e.startswith("start venv"))
    assert events.index("end python find") < events.index(venv)  # waited for uv's answer


def test_a_build_on_the_right_guess_that_fails_fails_the_install(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv's search names the interpreter built on: the build's own failure is the answer, once,
    and nothing of it is left."""
    answer = search_answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    uv, log = slow_uv(tmp_path, monkeypatch, fail_install=True)
    remembered(uv, PY, answer)
    code, err = _install(install_repos, tmp_path)
    assert code == 1 and "no space left" in err, err
    assert [e for e in uv_events(log) if e.startswith("start venv")] != []
    assert len([e for e in uv_events(log) if e.startswith("start pip")]) == 1  # not built again
    location = EnvLocation.named("lab")
    assert location.current() is None
    assert not any(p.is_dir() for p in location.versions.iterdir())
