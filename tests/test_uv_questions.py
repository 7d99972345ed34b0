"""Every uv that only answers gpuenv a question (which interpreter an install builds on, where
uv's cache is, uv's default index, whether uv can download a Python) runs in gpuenv's work root,
as a lock's and an install's uv do: a `uv.toml` in the user's working folder, or in the folder a
UV_WORKING_DIR of the user's names, has no say in the answer."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import gpuenv.uv.binary as uv_binary
from gpuenv import cache
from gpuenv.envs import python_check
from gpuenv.envs.early_python import start_search
from gpuenv.fs.workdir import uv_question_place
from gpuenv.index.config import uv_builtin_default_index
from gpuenv.machine import Machine, OSInfo
from gpuenv.setup.planning import python_available

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="a /bin/sh stand-in for uv")
PLANTED = (
    'cache-dir = "{cache}"\n'
    # no Python but uv's own, and none of those: any search of a system Python fails
    'python-preference = "only-managed"\n'
    'python-downloads = "never"\n'
)
NO_PYTHONS = Machine(os=OSInfo("linux", "Debian", "12"), arch="x86_64", platform="linux-64")


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A shared folder holding a planted uv.toml: the working folder, and UV_WORKING_DIR's."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "uv.toml").write_text(PLANTED.format(cache=shared / "planted-cache"))
    monkeypatch.chdir(shared)
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("UV_WORKING_DIR", str(shared))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "no-managed-pythons"))
    for name in ("UV_NO_CONFIG", "UV_CACHE_DIR", "UV_PYTHON_PREFERENCE", "UV_PYTHON_DOWNLOADS"):
        monkeypatch.delenv(name, raising=False)
    return shared


def _stand_in(tmp_path: Path) -> tuple[str, Path]:
    """A uv that records where it ran (its folder, UV_WORKING_DIR) and what it was asked."""
    log = tmp_path / "where"
    uv = tmp_path / "bin" / "uv"
    uv.parent.mkdir()
    uv.write_text(
        "#!/bin/sh\n"
        f'echo "$(pwd -P)|$UV_WORKING_DIR|$1 $2" >> "{log}"\n'
        'case "$1 $2" in\n'
        '  "python find") exit 1 ;;\n'  # not found: planning goes on to list and install
        '  "python list") echo "cpython-3.99.0-linux-x86_64-gnu" ;;\n'
        '  "pip compile") echo "--default-index <URL>  (by default: <https://i.example/simple>)";;\n'
        '  *) echo "/somewhere" ;;\n'
        "esac\n"
    )
    uv.chmod(0o755)
    return str(uv), log


@posix_only
def test_each_question_is_asked_in_gpuenvs_work_root(
    planted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv, log = _stand_in(tmp_path)
    monkeypatch.setattr(uv_binary, "find_uv", lambda: uv)
    start_search(uv, "3.99").communicate()
    python_check._no_download_for(uv, "3.99")
    cache.uv_cache(uv)
    uv_builtin_default_index.cache_clear()
    uv_builtin_default_index(uv)
    assert python_available("3.99", NO_PYTHONS, lambda _: None, may_install=False)
    assert python_available("3.99", NO_PYTHONS, lambda _: None, may_install=True)  # installed
    root = os.path.realpath(uv_question_place()[0])
    asked = [line.split("|") for line in log.read_text().splitlines()]
    assert [question for _, _, question in asked] == [
        "python find",  # the install's early search
        "python list",  # can uv download it
        "cache dir",
        "cache size",
        "pip compile",  # uv's default index
        "python find",  # planning (a dry run)
        "python list",
        "python find",  # planning
        "python install",
    ]
    assert {working for _, working, _ in asked} == {root}
    # each is started there too, but the early search: posix_spawn cannot change folder, and uv
    # changes to UV_WORKING_DIR's itself before it runs anything (the last test shows it)
    assert {folder for folder, _, _ in asked[1:]} == {root}
    assert str(planted) not in root


def test_uvs_cache_is_the_one_its_locks_use_not_a_planted_one(planted: Path) -> None:
    uv = uv_binary.find_uv()
    assert cache.uv_cache_dir(uv) != planted / "planted-cache"  # where uv.toml would point it


@pytest.mark.skipif(shutil.which("python3.11") is None, reason="a system Python 3.11 on PATH")
def test_the_python_an_install_builds_on_is_not_steered_by_a_planted_preference(
    planted: Path,
) -> None:
    uv = uv_binary.find_uv()
    search = start_search(uv, "3.11")
    out, _ = search.communicate()
    assert search.returncode == 0, out  # only-managed, and none installed, would find none
    assert python_available("3.11", NO_PYTHONS, lambda _: None, may_install=False)


def test_the_planted_configuration_would_steer_uv_where_the_user_works(planted: Path) -> None:
    """The plant is real: uv run in the user's folder follows it (so the tests above can fail)."""
    import subprocess

    uv = uv_binary.find_uv()
    done = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(planted / "planted-cache")
    found = subprocess.run(
        [uv, "python", "find", "--system", "--no-project", "3.11"], capture_output=True
    )
    assert found.returncode != 0


def test_what_uv_starts_runs_in_the_folder_uv_working_dir_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv changes to UV_WORKING_DIR's folder itself, so the interpreters and pyenv shims a
    search starts begin there too, though posix_spawn started uv in the user's folder."""
    from gpuenv.fs.workdir import uv_environment
    from gpuenv.uv.spawn import spawn

    there = tmp_path / "there"
    there.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    code = "import os; print(os.getcwd())"
    args = ["run", "--no-project", "--python", sys.executable, "python", "-c", code]
    started = spawn([uv_binary.find_uv(), *args], env=uv_environment(str(there)), stderr=False)
    out, _ = started.communicate(timeout=60)
    assert out.strip() == str(there)


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the tests run in a virtual environment")
def test_planning_never_counts_a_virtual_environments_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning asks what the install will (envs.early_python): the interpreter `uv venv` builds
    on. An active virtual environment's Python (these tests' own) is not one: planning on it
    would promise an install that then finds no Python."""
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_PYTHON_PREFERENCE", "only-managed")  # the user's own choice: honoured
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "no-managed-pythons"))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert not python_available(version, NO_PYTHONS, lambda _: None, may_install=False)


def test_the_cache_commands_work_where_gpuenvs_work_root_cannot_be_made(tmp_path: Path) -> None:
    """uv's cache then goes unreported (never asked from the user's folder), and stderr says
    why; gpuenv's own cache is still reported and cleaned, with exit 0."""
    from installrepos import gpuenv

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"GPUENV_HOME": str(blocker / "home"), "GPUENV_CACHE_DIR": str(tmp_path / "cache")}
    for command in (["cache", "size"], ["cache", "clean"]):
        done = gpuenv(*command, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("uv was not asked about its cache: cannot make gpuenv's") == 1


def test_a_uv_toml_above_gpuenvs_own_home_does_not_steer_the_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GPUENV_HOME below a shared folder (/tmp): uv's search for configuration goes up from
    gpuenv's work folder too, and ends there (as a lock's and an install's do)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "uv.toml").write_text(PLANTED.format(cache=shared / "planted-cache"))
    monkeypatch.setenv("GPUENV_HOME", str(shared / "home"))
    monkeypatch.chdir(tmp_path)
    for name in ("UV_NO_CONFIG", "UV_CACHE_DIR", "UV_WORKING_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert cache.uv_cache_dir(uv_binary.find_uv()) != shared / "planted-cache"


@pytest.mark.parametrize("plant", ["link", "writable-by-others"])
def test_a_questions_folder_someone_else_could_have_planted_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    from gpuenv.fs.workdir import QUESTIONS, WorkdirError, checked_work_root_text

    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    folder = Path(checked_work_root_text()) / QUESTIONS
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "uv.toml").write_text(PLANTED.format(cache=elsewhere / "planted-cache"))
    if plant == "link":
        folder.symlink_to(elsewhere)
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with pytest.raises(WorkdirError, match="not safe to use"):
        uv_question_place()


def test_a_uv_toml_the_user_put_in_the_questions_folder_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    folder, _ = uv_question_place()
    own = Path(folder) / "uv.toml"
    assert own.read_text().startswith("# gpuenv")  # made with the folder
    own.write_text("# the user's own settings\n")
    uv_question_place()
    assert own.read_text() == "# the user's own settings\n"
