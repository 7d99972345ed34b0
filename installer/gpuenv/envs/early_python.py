"""`uv python find` started first thing, for the Python the last `gpuenv install` asked about.

uv's search for an interpreter takes 0.1-0.3 s where it runs pyenv's shims, and an install needs
its answer before it builds anything: started from the lockfile's text (python_check), it began
50-70 ms into the command, after click, the install command and the lockfile's read. The
`gpuenv` program (`_entry`) starts it for the (uv, Python version) the previous install asked
about, before anything else is imported: a machine's installs mostly share one Python (a lab's
lockfiles are locked for one). The install uses that search only when it asks the same question
(the same uv, the same X.Y), and stops it otherwise: a wrong guess costs a stopped search, never
another interpreter, and the answer is checked as any other. Only the program does this, never
an importer of gpuenv's library (nor a test calling the CLI in-process).

The question is kept in gpuenv's cache (`install-pythons/`), read only when it is the user's own
(fs.private_read): it names the program that runs. Beside it, what the search answered: the
install builds on that interpreter while its own search runs, and keeps what it built only if
the search names it again (python_check.python_to_build_on, transaction.install's
confirm_python).
"""

from __future__ import annotations

import os
import re

from gpuenv.uv.spawn import stop_group

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:  # every install command line starts here (_entry): keep it light
    from typing import Optional

    from gpuenv.envs.python_check import PythonLookup
    from gpuenv.uv.spawn import Process

KIND = "install-pythons"
NAME = "last.json"
MAX_BYTES = 4096  # a uv path and an X.Y
_VERSION = re.compile(r"\d{1,2}\.\d{1,3}")  # what python_check.python_hint reads from a lockfile

# the program's own state: whether it asked (a library caller never does), what it read, and
# the search it started
_program = False
_early: Optional[tuple[str, str, Process]] = None  # uv, version, the search
_asked: Optional[tuple[str, str]] = None  # the question read from the cache
_found: Optional[str] = None  # what the last install's search answered it, read with it


def start_early() -> None:
    """For the program's `gpuenv install`: uv's search for the last install's Python."""
    global _program, _early, _asked, _found
    _program = True
    read = _read()
    if read is None:
        return
    uv, version, _found = read
    _asked = (uv, version)
    from gpuenv.fs.workdir import WorkdirError

    try:
        process = start_search(uv, version)
    except (OSError, WorkdirError):
        return  # the install starts it again when it asks, and says why if it fails
    _early = (uv, version, process)


def mark_program() -> None:
    """For the program's `gpuenv setup`: no early search (its no-op, the common case, would pay
    for one it never asks), but the kept answer is offered and kept (last_answer)."""
    global _program
    _program = True


def last_answer(uv: str, version: str) -> Optional[str]:
    """What the last install's search answered this question (kept for the program only; read
    once), for python_check.python_to_build_on; None if it was asked nothing else or not at all."""
    global _asked, _found
    if not _program:
        return None
    if _asked is None:
        read = _read()
        if read is None:
            return None
        _asked, _found = (read[0], read[1]), read[2]
    return _found if _asked == (uv, version) else None


def lookup(uv: str, version: Optional[str]) -> PythonLookup:
    """The search for `version` with `uv`: the one the program started, when it asked that,
    else a new one (the early one is stopped). Remembered for the next install."""
    global _early
    from gpuenv.envs.python_check import PythonLookup

    early, _early = _early, None
    if early is not None and (early[0], early[1]) == (uv, version):
        return PythonLookup(uv, version, started=early[2], guess=_found)
    if early is not None:
        stop_group(early[2])
    if version is not None:
        _remember(uv, version)
    return PythonLookup(uv, version)


def cancel_unclaimed() -> None:
    """Stop a search no install asked for (the command failed before it began)."""
    global _early
    early, _early = _early, None
    if early is not None:
        stop_group(early[2])


def start_search(uv: str, version: str) -> Process:
    """uv's search, running (python_check's searches start here too), in gpuenv's work root
    (fs.workdir.uv_question_place): uv moves there itself, so the shims it runs start there too."""
    from gpuenv.fs.workdir import uv_question_place
    from gpuenv.uv.spawn import spawn

    _, env = uv_question_place()
    return spawn(
        # --system: the interpreter `uv venv` would build on, never a virtual environment's
        [uv, "python", "find", "--system", "--no-project", version],
        env=env,
        stderr=False,
        # a group of its own, so that stopping it stops what uv started too (uv.spawn.stop_group)
        new_session=os.name == "posix",
    )


def _remember(uv: str, version: str) -> None:
    """Keep this question for the next install; only the program's, and only when it changed.
    Never fails the install."""
    if not _program or _asked == (uv, version):
        return
    import json

    from gpuenv import cache

    cache.write_entry(KIND, NAME, json.dumps({"uv": uv, "python": version}).encode())


def remember_found(uv: str, version: str, found: str) -> None:
    """Keep what the search answered this question (an interpreter's absolute path), for the
    next install to build on while its own search runs (python_check.python_to_build_on); only the
    program's, and only when it changed. Never fails the install."""
    if not _program or not os.path.isabs(found) or (_asked, _found) == ((uv, version), found):
        return
    import json

    from gpuenv import cache

    data = {"uv": uv, "python": version, "found": found}
    cache.write_entry(KIND, NAME, json.dumps(data).encode())


def _read() -> Optional[tuple[str, str, Optional[str]]]:
    """The (uv, version, found) kept, when the file is the user's own and exactly what
    _remember or remember_found writes: an absolute uv path, an X.Y (never an option), and
    where given an absolute interpreter path."""
    import json

    from gpuenv import cache

    raw = cache.read_entry(KIND, NAME, MAX_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) - {"found"} != {"uv", "python"}:
        return None
    uv, version, found = data["uv"], data["python"], data.get("found")
    if not (isinstance(uv, str) and isinstance(version, str)):
        return None
    if not os.path.isabs(uv) or _VERSION.fullmatch(version) is None:
        return None
    if "found" in data and not (isinstance(found, str) and os.path.isabs(found)):
        return None
    return uv, version, found
