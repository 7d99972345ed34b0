"""Install a locked environment: build beside the old environment (the installers download and
check every file against the lockfile's hashes), smoke-test, then swap the link in one atomic
rename. The core only orders the steps; where the
files come from (artifacts), how the folder is filled (backends) and how gpuenv's folders are
changed without following a link or leaving them (fs, store) live elsewhere.

Killed at any moment, the old environment still works: until the swap its link is untouched, and
a half-built folder has no metadata. Whatever a kill leaves (an unfinished build, or a replaced
version not yet deleted) is a leftover: the next install of the environment removes it, and
`gpuenv envs clean` removes any.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform as host
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from gpuenv.envs import fs, windows
from gpuenv.envs.activation import point_activation_at
from gpuenv.envs.errors import CorruptEnvironment, InstallError, StoreInputError
from gpuenv.envs.filelock import exclusive, timeout_from_env
from gpuenv.envs.inventory import leftovers_of
from gpuenv.envs.store import (
    EnvLocation,
    interpreter,
    read_metadata,
    write_metadata,
)
from gpuenv.machine import conda_platform

if TYPE_CHECKING:  # up_to_date, setup's no-op check, must not pay for the lockfile stack
    from gpuenv.envs.artifacts import InstallSource
    from gpuenv.lock.model import LockedEnvironment

Say = Callable[[str], None]
Check = Callable[[Path], Optional[str]]
# the interpreter an environment must be built on, once uv's search answers (raises when none
# can be had): see install's `confirm_python`
ConfirmPython = Callable[[], Optional[Path]]


@dataclass(frozen=True)
class InstallResult:
    changed: bool
    env_dir: Path
    link: Path
    python: Path
    backend: str


def up_to_date(lockfile_sha256: str, location: EnvLocation) -> Optional[Path]:
    """The environment's folder if it was built from exactly this lockfile (by content hash:
    cheap enough to decide a no-op before the lockfile is even parsed)."""
    current = location.current()
    if current is None:
        return None
    try:
        built_from = read_metadata(current).get("lockfile_sha256")
    except CorruptEnvironment:
        return None  # rebuilt, and the corrupt version retired
    return current if built_from == lockfile_sha256 else None


def check_location(location: EnvLocation) -> None:
    """Refuse, before any folder is made, a place gpuenv must not install to."""
    refusal = location.install_refusal()
    if refusal:
        raise StoreInputError(refusal)


def install(
    locked: LockedEnvironment,
    location: EnvLocation,
    files: list[InstallSource],
    *,
    uv: str,
    smoke: bool = True,
    say: Say = lambda _: None,
    lock_timeout: Optional[float] = None,
    notice: Optional[Say] = None,
    check: Optional[Check] = None,
    base_python: Optional[Path] = None,
    confirm_python: Optional[ConfirmPython] = None,
) -> InstallResult:
    """The transaction: check, take the lock, build aside, mark complete, swap, retire.

    `say` reports progress; `notice` (default: `say`) says that this install waits for another.
    `check`, when given, replaces the smoke test: it runs with the new environment's interpreter
    before the swap (setup's verify, so the frameworks are imported once, not twice) and returns
    why the environment must not be switched to, or None. `base_python` is the interpreter a
    venv is built on (check_python_available's answer); None: uv finds one for the version.
    `confirm_python`, when given, says which interpreter that must be once uv's search answers
    (`base_python` is then a guess, python_check.python_to_build_on): a venv built on another
    one is built again on it, before anything is checked or goes live.
    """
    check_platform(locked)
    check_location(location)
    for note in refuse_overlapping_wheels(files):  # a tampered or foreign lockfile's wheels
        say(note)
    timeout = timeout_from_env() if lock_timeout is None else lock_timeout
    waiting = _waiting_notice(location, timeout, notice or say)
    try:
        with exclusive(location.lock_path, timeout=timeout, on_wait=waiting, what=location.name):
            current = up_to_date(locked.content_sha256, location)  # another install may have won
            if current:
                return _result(False, current, location)
            check_location(location)  # again: the link may have changed while we waited
            _remove_leftovers(location, say)
            target = _build_aside(
                locked, location, files, uv, smoke, say, check, base_python, confirm_python
            )
            _go_live(location, target)
            return _result(True, target, location)
    except OSError as exc:  # a full disk, a read-only store: one message, nothing half-done
        raise fs.disk_error(exc, str(location.root)) from exc


def refuse_overlapping_wheels(files: list[InstallSource]) -> list[str]:
    """No two wheels may write one file (whatever made the lockfile): WheelOverlapError before
    anything is changed; a note for each wheel whose file list could not be read."""
    from gpuenv.index.wheel_records import LockedWheel, refuse_overlaps

    wheels = [
        LockedWheel(f.artifact.filename, f.url, f.artifact.sha256 or "")
        for f in files
        if f.artifact.kind == "pip"
    ]
    return refuse_overlaps(wheels, "this lockfile")


def _go_live(location: EnvLocation, target: Path) -> None:
    """Swap the link to the new version; the version it replaced becomes the previous one
    (restorable with `gpuenv envs rollback`), and the one that was previous goes."""
    replaced = location.linked_version()
    older = location.previous_version()
    try:
        _swap(location.link, target)
    except BaseException:
        fs.remove_tree_quietly(target, location.root)  # the old link still stands
        raise
    if replaced is None or replaced == target:
        return
    if not _complete(replaced):  # a corrupt version is nothing to roll back to
        fs.remove_tree_quietly(replaced, location.root)  # killed before this: a leftover
        return
    _swap(location.previous_link, replaced)  # killed before this: `older` stays previous
    if older is not None and older not in (target, replaced):
        fs.remove_tree_quietly(older, location.root)  # killed before this: a leftover


def _complete(version: Path) -> bool:
    try:
        read_metadata(version)
    except (CorruptEnvironment, InstallError, OSError):
        return False
    return True


def rollback(location: EnvLocation) -> tuple[Path, Path]:
    """Make the previous version live again, and the live one previous (a second rollback
    undoes the first). Returns (now live, now previous)."""
    with exclusive(location.lock_path, timeout=timeout_from_env(), what=location.name):
        previous = location.previous_version()
        live = location.linked_version()
        if previous is None or live is None:
            raise StoreInputError(
                f"{location.name} has no previous version to roll back to (gpuenv keeps the"
                " version an install replaced until the next install; none was replaced since)"
            )
        try:
            _swap(location.link, previous)
            _swap(location.previous_link, live)
        except OSError as exc:
            raise fs.disk_error(exc, str(location.root)) from exc
    return previous, live


def _waiting_notice(
    location: EnvLocation, timeout: Optional[float], say: Say
) -> Callable[[Optional[int]], None]:
    def notice(pid: Optional[int]) -> None:
        by = f" (pid {pid})" if pid else ""
        limit = f"up to {timeout:g}s" if timeout is not None else "--lock-timeout SECONDS limits it"
        say(f"waiting for another gpuenv install of {location.name}{by} to finish ({limit})")

    return notice


def tidy_leftovers(location: EnvLocation, say: Say = lambda _: None) -> None:
    """On a no-op: remove version folders a killed install left (after its swap, before it
    deleted the version it replaced), unless an install of this environment is running now.
    Costs one folder listing when there is nothing to remove."""
    if not leftovers_of(location):
        return
    from gpuenv.envs.errors import LockTimeout

    try:
        with exclusive(location.lock_path, timeout=0, what=location.name):
            _remove_leftovers(location, say)
    except LockTimeout:
        return  # that install removes them itself
    except OSError as exc:
        raise fs.disk_error(exc, str(location.root)) from exc


def _remove_leftovers(location: EnvLocation, say: Say) -> None:
    """Version folders of this environment no link points at: killed builds, replaced versions.
    Holding the lock, no other install is building one of them."""
    for folder in leftovers_of(location):
        say(f"removing a leftover version folder {folder}")
        fs.remove_tree(folder, location.root)


def _build_aside(
    locked: LockedEnvironment,
    location: EnvLocation,
    files: list[InstallSource],
    uv: str,
    smoke: bool,
    say: Say,
    check: Optional[Check] = None,
    base_python: Optional[Path] = None,
    confirm_python: Optional[ConfirmPython] = None,
) -> Path:
    """A complete new version folder beside the live one; removed again if anything fails."""
    from gpuenv.envs import backends

    target = location.version_dir(locked.content_sha256)
    # the same lockfile as the live version (its metadata corrupt) or the previous one (kept
    # for a rollback): build beside it, never into it
    if target in (location.linked_version(), location.previous_version()):
        target = location.version_dir(hashlib.sha256(target.name.encode()).hexdigest())
    os.makedirs(target.parent, exist_ok=True)
    try:
        if confirm_python is None:
            backend = _build(locked, target, location.link, files, uv, say, base_python)
        else:
            backend = _build_on_guess(
                locked, target, location, files, uv, say, base_python, confirm_python
            )
        if check is not None:
            error = check(interpreter(target))
            if error:
                raise InstallError(f"the new environment failed its check:\n{error}")
        elif smoke:
            say("checking that the frameworks import")
            error = backends.smoke_test(interpreter(target), list(locked.plan.frameworks))
            if error:
                raise InstallError(f"the new environment does not import its frameworks:\n{error}")
        write_metadata(target, _metadata(locked, location, backend))
    except BaseException:
        fs.remove_tree_quietly(target, location.root)
        raise
    return target


def _build_on_guess(
    locked: LockedEnvironment,
    target: Path,
    location: EnvLocation,
    files: list[InstallSource],
    uv: str,
    say: Say,
    guess: Optional[Path],
    confirm_python: ConfirmPython,
) -> str:
    """_build on the guessed interpreter while uv's search runs; built again on the one the
    search names when that is another (or when the guess could not be built on)."""
    try:
        backend = _build(locked, target, location.link, files, uv, say, guess)
        failed: Optional[InstallError] = None
    except InstallError as exc:  # a guess that is no working Python now, say
        backend, failed = "", exc
    confirmed = confirm_python()  # raises when no Python can be had: nothing goes live
    if confirmed == guess:
        if failed is not None:
            raise failed
        return backend
    say(f"uv's search named another Python ({confirmed or 'one uv venv finds'}): building again")
    fs.remove_tree(target, location.root)
    return _build(locked, target, location.link, files, uv, say, confirmed)


def check_platform(locked: LockedEnvironment) -> None:
    """Refuse a lockfile made for another platform before anything is downloaded."""
    system = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}.get(host.system(), "")
    here = conda_platform(system, host.machine()) if system else "unknown"
    if here != locked.platform:
        raise InstallError(
            f"{locked.path} is for {locked.platform}; this machine is {here}. Lock for this"
            " machine (`gpuenv lock`), or use the lab lockfile of its class."
        )


def _build(
    locked: LockedEnvironment,
    target: Path,
    link: Path,
    files: list[InstallSource],
    uv: str,
    say: Say,
    base_python: Optional[Path] = None,
) -> str:
    from gpuenv.envs import backends

    conda = [f for f in files if f.artifact.kind == "conda"]
    wheels = [f for f in files if f.artifact.kind == "pip"]
    if conda:
        say(f"installing {len(conda)} conda packages")
        python = backends.create_conda(target, conda, locked.platform)
        backend = "conda"
    else:
        say(f"creating a Python {locked.python} environment")
        python = backends.create_venv(target, locked.python, uv, base_python)
        backend = "venv"
    say(f"installing {len(wheels)} wheels ({_wheel_origin(wheels)})")
    backends.install_wheels(python, wheels, uv)
    if backend == "venv":
        point_activation_at(target, link)
    if locked.platform.startswith("win"):
        windows.write_dll_pth(target)
    return backend


def _metadata(locked: LockedEnvironment, location: EnvLocation, backend: str) -> dict[str, object]:
    plan = locked.plan
    return {
        "name": location.name,
        "lockfile": str(locked.path.resolve()),
        "lockfile_sha256": locked.content_sha256,
        "inputs_hash": locked.inputs_hash,
        "platform": locked.platform,
        "python": plan.python,
        "backend": backend,
        "accelerator": plan.accelerator,
        "stack": {n: f"{f.version} [{f.variant}]" for n, f in plan.frameworks.items()},
        "plan": plan.to_json(with_rejected=False),
        "pip_packages": sorted(p.name for p in locked.pip),  # to tell packages added by hand
        "installed_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _swap(link: Path, target: Path) -> None:
    """Point `link` at `target`: one atomic rename on POSIX; a junction swap on Windows."""
    tmp = link.with_name(f".{link.name}.new-link")
    if fs.lexists(tmp):
        fs.remove_link(tmp)  # refuses anything but a link a killed swap left
    if sys.platform == "win32":
        import _winapi

        _winapi.CreateJunction(str(target), str(tmp))
        if fs.lexists(link):
            old = link.with_name(f".{link.name}.old-link")
            os.replace(link, old)
            os.replace(tmp, link)
            fs.remove_link(old)
        else:
            os.replace(tmp, link)
        return
    os.symlink(target, tmp, target_is_directory=True)
    os.replace(tmp, link)


def _result(changed: bool, env_dir: Path, location: EnvLocation) -> InstallResult:
    backend = str(read_metadata(env_dir).get("backend", ""))
    return InstallResult(changed, env_dir, location.link, interpreter(env_dir), backend)


def _wheel_origin(wheels: list[InstallSource]) -> str:
    """Where the wheels come from, as the install line says it (each is hash-checked anyway)."""
    local = sum(1 for w in wheels if w.is_local)
    if wheels and local == len(wheels):
        return "from local files (a wheelhouse or the cache), each checked against the lockfile"
    if local:
        return f"{local} from local files, the rest downloaded by uv, each checked against the lockfile"
    return "uv downloads each and checks it against the lockfile"
