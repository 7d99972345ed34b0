"""Fail fast: before anything is downloaded, the Python a lockfile needs must be one this machine
has or one uv can fetch. A conda lockfile brings its own python package; a venv lockfile needs
uv to find the interpreter (`uv python find`) or to be allowed to download it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional

from gpuenv.envs.errors import InstallError
from gpuenv.lock.lockfile import LockedEnvironment

UV_QUERY_TIMEOUT = 60.0
# uv's own switches that forbid the automatic download `uv venv --python X.Y` would make
_NO_DOWNLOAD_VALUES = {"never", "manual"}
_TRUE = {"1", "true", "yes", "on"}


class PythonUnavailable(InstallError):
    """The lockfile's Python is neither here nor downloadable: exit 1, with the fix."""


def check_python_available(
    locked: LockedEnvironment, *, uv: str, offline: bool = False
) -> Optional[Path]:
    """The interpreter a venv of this lockfile is built on, when this machine has it (pass it
    to the install: `uv venv` then skips looking for it again, most of its time); None when the
    conda packages bring their own or uv will download it. Raises, with the fix, when the
    interpreter can be had neither way."""
    if locked.conda:
        if any(record.get("name") == "python" for record in locked.conda):
            return None  # the conda packages install it
        raise PythonUnavailable(
            f"{locked.path} has conda packages but no python among them, so its environment"
            " would have no interpreter. Lock it again (`gpuenv lock`)."
        )
    version = locked.python
    found = _uv_finds(uv, version)
    if found is not None:
        # uv's answer is used only as the absolute path of an existing file; anything else
        # still means "found", and `uv venv` looks for the version itself, as it always did
        path = Path(found)
        return path if path.is_absolute() and path.is_file() else None
    discovered = _discovered(version)
    if discovered is not None:  # present where uv does not look (pyenv's versions, ...)
        return discovered
    why = _why_no_download(offline) or _no_download_for(uv, version)
    if why is None:
        return None  # `uv venv` will download it
    raise PythonUnavailable(
        f"{locked.path} needs Python {version}, which this machine does not have, and {why}."
        f" Nothing was downloaded. Fix: install Python {version} (`uv python install {version}`"
        " where the network is reachable), or lock for a Python this machine has"
        " (`gpuenv lock --python X.Y`)."
    )


def _uv_finds(uv: str, version: str) -> Optional[str]:
    """What `uv python find` prints for the version; None when it finds nothing."""
    # --system: the interpreter `uv venv` would build on, never a virtual environment's
    done = _query([uv, "python", "find", "--system", "--no-project", version])
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    return done.stdout.strip()


def _discovered(version: str) -> Optional[Path]:
    """An interpreter of `version` (X.Y) that gpuenv's own discovery knows of (uv-managed,
    pyenv's versions, PATH): `uv python find` does not search pyenv's versions folder."""
    import platform

    from gpuenv.detect.pythons import on_path, pyenv_versions, uv_managed

    system = platform.system()
    found = [
        *uv_managed(os.environ, system),
        *pyenv_versions(os.environ, system),
        *on_path(os.environ.get("PATH", "")),
    ]
    for python in found:
        if ".".join(python.version.split(".")[:2]) == version and Path(python.path).is_file():
            return Path(python.path)
    return None


def _why_no_download(offline: bool) -> str | None:
    if offline:
        return "--offline forbids downloading it"
    setting = os.environ.get("UV_PYTHON_DOWNLOADS", "").strip().lower()
    if setting in _NO_DOWNLOAD_VALUES:
        return f"UV_PYTHON_DOWNLOADS={setting} forbids uv to download it"
    if os.environ.get("UV_OFFLINE", "").strip().lower() in _TRUE:
        return "UV_OFFLINE forbids uv to download it"
    return None


def _no_download_for(uv: str, version: str) -> str | None:
    """None if uv offers a CPython `version` for this platform (its list is built in: no
    network is used to answer)."""
    done = _query([uv, "python", "list", version, "--only-downloads", "--output-format", "json"])
    if done is None or done.returncode != 0:
        return "uv could not say whether it can download it"
    try:
        offers = json.loads(done.stdout or "[]")
    except ValueError:
        return "uv could not say whether it can download it"
    if isinstance(offers, list) and any(
        isinstance(o, dict) and str(o.get("key", "")).startswith("cpython-") for o in offers
    ):
        return None
    return "uv has no download of it for this machine"


def _query(cmd: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=UV_QUERY_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
