"""Hostile round three's tracebacks, each now one clear message and a documented exit code:
non-finite and huge numbers and deep nesting in --machine JSON and in environment metadata,
GPUENV_DOWNLOAD_TIMEOUT of 0, -1, nan, inf or abc (which was silently ignored), Ctrl-C during
start-up."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuenv.envs.artifacts import READ_TIMEOUT_S, read_timeout
from gpuenv.envs.errors import StoreInputError
from gpuenv.errors import USAGE_EXIT, exit_code
from gpuenv.fs import strict_json
from installrepos import gpuenv

DEEP = "[" * 100_000 + "]" * 100_000
MACHINE = {
    "os": {"family": "linux", "name": "Ubuntu", "version": "22.04", "wsl": False},
    "arch": "x86_64",
    "platform": "linux-64",
    "glibc": "2.35",
    "pythons": [],
    "driver": {"version": "550.54.14", "cuda": "12.4"},
    "gpus": [],
}


@pytest.mark.parametrize(
    "number", ["NaN", "Infinity", "-Infinity", "1e5000", "9" * 5000, "1." + "5" * 5000]
)
def test_machine_json_with_a_number_no_machine_has(number: str, tmp_path: Path) -> None:
    text = json.dumps(MACHINE).replace('"550.54.14"', '"550.54.14", "x": ' + number)
    path = tmp_path / "m.json"
    path.write_text(text)
    out = gpuenv("resolve", "jax", "--machine", str(path))
    assert out.returncode == USAGE_EXIT, out.stderr
    assert "not valid JSON" in out.stderr and "Traceback" not in out.stderr


def test_machine_json_nested_too_deeply(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(DEEP)
    out = gpuenv("resolve", "jax", "--machine", str(path))
    assert out.returncode == USAGE_EXIT and "nested too deeply" in out.stderr, out.stderr


def test_the_strict_reader_keeps_ordinary_json() -> None:
    assert strict_json.loads('{"a": [1, 2.5, -3e2, null, true]}') == {
        "a": [1, 2.5, -300.0, None, True]
    }


def test_environment_metadata_nested_too_deeply(tmp_path: Path) -> None:
    from gpuenv.envs.store import METADATA, CorruptEnvironment, read_metadata

    (tmp_path / METADATA).write_text(DEEP)
    with pytest.raises(CorruptEnvironment, match="nested too deeply"):
        read_metadata(tmp_path)
    (tmp_path / METADATA).write_text('{"backend": NaN}')
    with pytest.raises(CorruptEnvironment, match="not JSON"):
        read_metadata(tmp_path)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "abc", "1e400", "90000"])
def test_a_download_timeout_that_is_not_seconds_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUENV_DOWNLOAD_TIMEOUT", value)
    with pytest.raises(StoreInputError, match="GPUENV_DOWNLOAD_TIMEOUT") as raised:
        read_timeout()
    assert exit_code(raised.value) == USAGE_EXIT


def test_a_download_timeout_in_seconds_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUENV_DOWNLOAD_TIMEOUT", " 2.5 ")
    assert read_timeout() == 2.5
    monkeypatch.delenv("GPUENV_DOWNLOAD_TIMEOUT")
    assert read_timeout() == READ_TIMEOUT_S


# Started through a wrapper that says "up" once gpuenv's own first frame holds Ctrl-C: when
# _entry.main's `try` imports gpuenv.cli (an import hook says so), so even a delay of 0 sends
# the signal inside gpuenv, never in the wrapper's own lines before it (which are the
# interpreter's to report, as Ctrl-C during Python's start-up is).
_WRAPPER = (
    "import sys, importlib.abc\n"
    "class Up(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == 'gpuenv.cli':\n"
    "            sys.stderr.write('up\\n'); sys.stderr.flush()\n"
    "        return None\n"
    "sys.meta_path.insert(0, Up())\n"
    "from gpuenv._entry import main\n"
    "sys.argv = ['gpuenv', 'resolve', 'jax', '--no-gpu']\n"
    "main()\n"
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.3])
def test_ctrl_c_at_any_moment_of_start_up_is_one_line(delay: float) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _WRAPPER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    assert child.stderr.readline() == "up\n"
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _out, err = child.communicate(timeout=60)
    assert "Traceback" not in err
    # 130, or death by SIGINT itself (-2), which shells report as 130 too
    assert child.returncode in (0, 130, -signal.SIGINT), err
    if child.returncode != 0:
        assert err.strip().splitlines()[-1] in ("gpuenv: interrupted", "gpuenv: aborted")


BAD_URL = "http://[::1"  # an IPv6 host never closed: urllib's urlsplit raises on it


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    from lockdata import write_valid

    lockfile = str(write_valid(tmp_path / "v.conda-lock.yml"))
    return {
        "lock": [
            "lock",
            "jax",
            "--no-gpu",
            "--os",
            "linux",
            "--python",
            "3.11",
            "-o",
            str(tmp_path / "x.conda-lock.yml"),
        ],
        "install": ["install", lockfile, "--name", "bad", "--dry-run"],
        "fetch": ["fetch", lockfile, "-d", str(tmp_path / "house")],
        "recipes check --online": ["recipes", "check", "--online"],
    }


@pytest.mark.parametrize("command", ["lock", "install", "fetch", "recipes check --online"])
@pytest.mark.parametrize(
    "variable",
    [
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "UV_DEFAULT_INDEX",
        "UV_INDEX_URL",
        "UV_INDEX",
        "UV_EXTRA_INDEX_URL",
        "UV_FIND_LINKS",
    ],
)
def test_an_index_url_that_is_no_url_is_one_message(
    command: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that reads the index configuration names the setting and stops (exit 2)
    before anything else, whichever pip or uv variable holds it."""
    from lockdata import in_process

    if command == "recipes check --online" and variable not in (
        "PIP_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_INDEX_URL",
    ):
        pytest.skip("recipes check --online reads the default index only")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    for var in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(variable, BAD_URL)
    code, _, err = in_process(*_commands(tmp_path)[command])  # a traceback fails the test
    assert code == USAGE_EXIT, err
    assert "is not a valid URL" in err and variable.split("_", 1)[1].lower()[:5] in err.lower()
    assert err.count("gpuenv: error:") == 1 and "Traceback" not in err
    assert not (tmp_path / "house").exists() and not (tmp_path / "x.conda-lock.yml").exists()


def test_an_ipv6_index_url_is_still_an_index() -> None:
    from gpuenv.index.config import user_index_config

    config = user_index_config(
        {"PIP_INDEX_URL": "http://[::1]:8080/simple/", "PIP_CONFIG_FILE": "/dev/null"}
    )
    assert config.index_url == "http://[::1]:8080/simple/"
