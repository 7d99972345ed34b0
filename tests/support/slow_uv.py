"""A uv that answers `python find` late, logging what each command did, and the record an
earlier install of the `gpuenv` program leaves: for the tests of the install's build on the
last answer (python_check.python_to_build_on)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import gpuenv.uv.binary as uv_binary
from gpuenv.envs import early_python

SEARCH_SECONDS = 2  # the wrapped search's delay: the install's own work fits in it


def slow_uv(
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


def search_answer(version: str) -> str:
    """What uv's search answers for `version` here (as the install's search asks it)."""
    done = subprocess.run(
        [uv_binary.find_uv(), "python", "find", "--system", "--no-project", version],
        capture_output=True,
        text=True,
        cwd="/",
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def remembered(uv: Path, version: str, found: str) -> None:
    """The record an earlier install of the program left: its question and the answer."""
    folder = Path(os.environ["GPUENV_CACHE_DIR"]) / early_python.KIND
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = folder / early_python.NAME
    record.write_text(json.dumps({"uv": str(uv), "python": version, "found": found}))
    record.chmod(0o600)


def uv_events(log: Path) -> list[str]:
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


def stand_in_python(tmp_path: Path, body: str) -> str:
    """Another interpreter file than uv's answer: a script that runs `body`."""
    script = tmp_path / "elsewhere" / "python3"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)
