"""Lockfile names: the ones other tools recognise, chosen by format, and which reader a name gets.

PEP 751 fixes a lock's name: `pylock.toml` or `pylock.NAME.toml` (NAME without dots). conda-lock
and micromamba recognise `*.conda-lock.yml`; gpuenv writes that for new conda-lock files and
still reads any other name it wrote before (`*.lock.yml`).
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuenv.errors import USAGE_EXIT, GpuenvError

CONDA_LOCK = "conda-lock"
PYLOCK = "pylock"
DEFAULT_OUTPUT = {CONDA_LOCK: Path("gpuenv.conda-lock.yml"), PYLOCK: Path("pylock.toml")}
CONDA_LOCK_SUFFIX = ".conda-lock.yml"
_PYLOCK_NAME = re.compile(r"^pylock(?:\.[^.]+)?\.toml$")


class LockNameError(GpuenvError, ValueError):
    """A lockfile name that the chosen format (or its readers) cannot use."""

    exit_code = USAGE_EXIT


def is_pylock_name(path: Path) -> bool:
    return bool(_PYLOCK_NAME.match(Path(path).name))


def default_output(fmt: str) -> Path:
    return DEFAULT_OUTPUT[fmt]


def check_output(fmt: str, path: Path) -> None:
    """Refuse a name that would put one format's text under the other's name."""
    name = Path(path).name
    if fmt == PYLOCK:
        if not is_pylock_name(path):
            raise LockNameError(
                f"{name}: a PEP 751 lock must be named pylock.toml or pylock.NAME.toml"
                " (NAME without dots), e.g. -o pylock.gpu.toml"
            )
    elif name.endswith(".toml"):
        raise LockNameError(
            f"{name}: a conda-lock file is YAML; name it NAME{CONDA_LOCK_SUFFIX}"
            " (or pass --format pylock for a PEP 751 pylock.toml)"
        )
