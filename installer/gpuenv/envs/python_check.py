"""Fail fast: before anything is downloaded, the Python a lockfile needs must be one this machine
has or one uv can fetch. A conda lockfile brings its own python package; a venv lockfile needs
uv to find the interpreter (`uv python find`) or to be allowed to download it.

uv's search takes 0.1-0.3 s where it runs pyenv's shims to learn what they are, so it is started
(PythonLookup) as soon as the version is known, even from a hint in the lockfile's text before
the file is parsed, and answered when the install needs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from gpuenv.envs.early_python import remember_found, start_search
from gpuenv.envs.errors import InstallError
from gpuenv.uv.question import ask_uv
from gpuenv.uv.spawn import stop_group

if TYPE_CHECKING:  # a lookup starts before the lockfile stack is imported
    from gpuenv.envs.transaction import ConfirmPython
    from gpuenv.lock.model import LockedEnvironment
    from gpuenv.uv.spawn import Process

UV_QUERY_TIMEOUT = 60.0
# uv's own switches that forbid the automatic download `uv venv --python X.Y` would make
_NO_DOWNLOAD_VALUES = {"never", "manual"}
_TRUE = {"1", "true", "yes", "on"}


class PythonUnavailable(InstallError):
    """The lockfile's Python is neither here nor downloadable: exit 1, with the fix."""


class PythonLookup:
    """`uv python find` for one X.Y version: started now (a child process), answered later; as
    a context manager, stopped on leaving unless answered. Version None: nothing to look for."""

    def __init__(
        self,
        uv: str,
        version: Optional[str],
        started: Optional[Process] = None,
        guess: Optional[str] = None,
    ) -> None:
        """`started`: this search, already running (the program's early one, envs.early_python);
        `guess`: what the last install's search answered the same question (python_to_build_on)."""
        self.uv, self.version, self.guess = uv, version, guess
        self._proc: Optional[Process] = started
        if version is None or started is not None:
            return
        try:
            self._proc = start_search(uv, version)
        except OSError:
            self._proc = None

    def __enter__(self) -> PythonLookup:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cancel()

    def answer(self) -> Optional[str]:
        """What uv printed for the version (an interpreter's path); None when it found nothing,
        failed, or took longer than UV_QUERY_TIMEOUT."""
        if self._proc is None:
            return None
        try:
            out, _ = self._proc.communicate(timeout=UV_QUERY_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.cancel()
            return None
        if self._proc.returncode != 0 or not out.strip():
            return None
        return out.strip()

    def running(self) -> bool:
        """Whether the search has not answered yet."""
        return self._proc is not None and self._proc.poll() is None

    def cancel(self) -> None:
        """Stop the search if it still runs (its answer is not wanted: the install stopped, or
        the lockfile named another version than its hint)."""
        if self._proc is not None:
            stop_group(self._proc)


# how gpuenv's conda-lock files name their Python (gpuenv.lock.conda_lock.write writes it; YAML quotes it)
_PYTHON_LINE = re.compile(rb"""^[ ]+gpuenv\.python:[ ]*(['"]?)(\d{1,2}\.\d{1,3})\1[ ]*\r?$""", re.M)


def python_hint(raw: bytes) -> Optional[str]:
    """The X.Y a gpuenv conda-lock file's text names for its venv, read before the file is
    parsed, so uv's search can start meanwhile. Only a hint, from untrusted text: the parsed
    lockfile decides whether the search's answer is used. None for a lockfile with conda
    packages (they bring their own Python), a pylock file, or anything unexpected."""
    if b"manager: conda" in raw:
        return None
    found = _PYTHON_LINE.findall(raw)
    return found[0][1].decode() if len(found) == 1 else None


def check_python_available(
    locked: LockedEnvironment,
    *,
    uv: str,
    offline: bool = False,
    lookup: Optional[PythonLookup] = None,
) -> Optional[Path]:
    """The interpreter a venv of this lockfile is built on, when this machine has it (pass it
    to the install: `uv venv` then skips looking for it again, most of its time); None when the
    conda packages bring their own or uv will download it. Raises, with the fix, when the
    interpreter can be had neither way. `lookup`: a search started earlier, used if it is for
    this lockfile's version with this uv (and cancelled otherwise)."""
    if lookup is not None and (locked.conda or (lookup.uv, lookup.version) != (uv, locked.python)):
        lookup.cancel()  # not this lockfile's question
        lookup = None
    if locked.conda:
        if any(record.get("name") == "python" for record in locked.conda):
            return None  # the conda packages install it
        raise PythonUnavailable(
            f"{locked.path} has conda packages but no python among them, so its environment"
            " would have no interpreter. Lock it again (`gpuenv lock`)."
        )
    version = locked.python
    found = lookup.answer() if lookup is not None else _uv_finds(uv, version)
    if found is not None:
        remember_found(uv, version, found)
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


def python_to_build_on(
    locked: LockedEnvironment,
    *,
    uv: str,
    lookup: Optional[PythonLookup],
    offline: bool = False,
) -> tuple[Optional[Path], Optional[ConfirmPython]]:
    """The interpreter to build a venv of `locked` on now, and, where that is _early_guess's
    guess, how to confirm it once uv's search answers (transaction.install's confirm_python);
    otherwise check_python_available's answer, before anything is downloaded, and None."""
    confirm = partial(check_python_available, locked, uv=uv, offline=offline, lookup=lookup)
    guess = _early_guess(locked, uv, lookup)
    return (confirm(), None) if guess is None else (guess, confirm)


def _early_guess(
    locked: LockedEnvironment, uv: str, lookup: Optional[PythonLookup]
) -> Optional[Path]:
    """The interpreter the last install's search found for this lockfile's question, while
    this install's own search still runs: a venv is built on it meanwhile, and kept only if
    the search names it again (transaction.install's `confirm_python`). None where there is no
    such answer, it is no file now, or the search has answered already."""
    if lookup is None or lookup.guess is None or locked.conda:
        return None
    if (lookup.uv, lookup.version) != (uv, locked.python) or not lookup.running():
        return None
    path = Path(lookup.guess)
    return path if path.is_absolute() and path.is_file() else None


def _uv_finds(uv: str, version: str) -> Optional[str]:
    """What `uv python find` prints for the version; None when it finds nothing."""
    return PythonLookup(uv, version).answer()


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
    command = [uv, "python", "list", version, "--only-downloads", "--output-format", "json"]
    done = ask_uv(command, UV_QUERY_TIMEOUT)
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
