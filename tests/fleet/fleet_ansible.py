"""Running ansible-playbook from the tests: where it is, a private environment, the gpuenv.lab
collection from this checkout, and the play recap read back."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COLLECTION = REPO / "ansible" / "gpuenv_lab"
PLAYBOOK = REPO / "scripts" / "fleet" / "gpuenv.yml"


def ansible_tool(name: str = "ansible-playbook") -> str:
    # beside this interpreter first: `pip install -e '.[test]'` puts it in the same venv
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install ansible-core, or '.[test]')")
    return found


def collections_path(folder: Path) -> Path:
    """A collections folder holding this checkout's gpuenv.lab (a link, so edits count)."""
    target = folder / "ansible_collections" / "gpuenv" / "lab"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(COLLECTION, target_is_directory=True)
    return folder


def ansible_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    config = tmp_path / "ansible.cfg"  # an empty one: none of the working folder's or the user's
    config.write_text("[defaults]\n")
    return {
        **os.environ,
        "ANSIBLE_CONFIG": str(config),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ansible-remote-tmp"),
        "ANSIBLE_COLLECTIONS_PATH": str(collections_path(tmp_path / "collections")),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        **extra,
    }


def gpuenv_wrapper(folder: Path) -> Path:
    """A folder with bin/gpuenv: this checkout's gpuenv run by this interpreter (what the role
    finds as gpuenv_venv, on the controller and on the test's hosts, which share this disk)."""
    exe = folder / "bin" / "gpuenv"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{REPO / "installer"}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        "export PYTHONPATH\n"
        f'exec "{sys.executable}" -m gpuenv "$@"\n'
    )
    exe.chmod(0o755)
    return folder


_RECAP = re.compile(
    r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M
)


def recap(output: str) -> dict[str, dict[str, int]]:
    """The PLAY RECAP: host -> ok, changed, unreachable, failed."""
    tail = output.rsplit("PLAY RECAP", 1)[-1]
    return {
        m[1]: dict(zip(("ok", "changed", "unreachable", "failed"), map(int, m.groups()[1:])))
        for m in _RECAP.finditer(tail)
    }
