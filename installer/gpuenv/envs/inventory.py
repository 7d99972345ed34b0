"""The store as a whole: which environments it holds, which entries are broken, what a crash
or an interrupted install left behind, and removing each of those (through gpuenv.envs.fs,
which never follows a link nor leaves the store). gpuenv.envs.store says where one environment
lives and what gpuenv records about it."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpuenv.envs import fs
from gpuenv.envs.errors import (
    CorruptEnvironment,
    EnvironmentNotFound,
    InstallError,
    StoreInputError,
)
from gpuenv.envs.store import (
    METADATA,
    VERSION_HASH,
    VERSIONS,
    EnvLocation,
    name_problem,
    read_metadata,
    store_root,
    why_not_ours,
)


def folder_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):  # os.walk does not descend into links
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


# -- the store as a whole: environments, broken entries, leftovers ---------------------------


@dataclass(frozen=True)
class EnvSummary:
    name: str
    path: Path
    metadata: dict[str, Any]
    size: int


@dataclass(frozen=True)
class BrokenEntry:
    """Something in the store that is not a working environment, and why."""

    name: str
    path: Path
    reason: str
    made_by_gpuenv: bool  # a link gpuenv made (reinstall or remove it); else leave it be


@dataclass(frozen=True)
class Leftover:
    """A version folder no environment links to: an unfinished build or a replaced version."""

    path: Path
    env: str
    reason: str
    size: int


@dataclass(frozen=True)
class StoreScan:
    envs: list[EnvSummary] = field(default_factory=list)
    broken: list[BrokenEntry] = field(default_factory=list)
    leftovers: list[Leftover] = field(default_factory=list)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def scan_store(sizes: bool = True) -> StoreScan:
    """Every entry of the store, each judged on its own: one corrupt entry hides no other."""
    root = store_root()
    scan = StoreScan()
    linked: set[str] = set()
    for entry in _entries(root):
        if entry.name.startswith("."):
            continue
        path = root / entry.name
        problem = name_problem(entry.name)
        if problem:
            scan.broken.append(
                BrokenEntry(entry.name, path, f"not an environment name ({problem})", False)
            )
            continue
        location = EnvLocation.named(entry.name)
        target = location.linked_version()
        if target is None:
            ours = location.own_target() is not None  # a link gpuenv made, now dangling
            scan.broken.append(BrokenEntry(entry.name, path, why_not_ours(location), ours))
            continue
        linked.add(target.name)
        previous = location.previous_version()
        if previous is not None:  # kept for `gpuenv envs rollback`: no leftover
            linked.add(previous.name)
        try:
            metadata = read_metadata(target)
        except CorruptEnvironment as exc:
            scan.broken.append(BrokenEntry(entry.name, path, str(exc), True))
            continue
        scan.envs.append(
            EnvSummary(entry.name, path, metadata, folder_size(target) if sizes else 0)
        )
    scan.leftovers.extend(_leftovers(root / VERSIONS, linked, sizes))
    return scan


def _leftovers(versions: Path, linked: set[str], sizes: bool) -> list[Leftover]:
    out = []
    for entry in _entries(versions):
        env, _, tail = entry.name.rpartition("-")
        if entry.name in linked or not (env and VERSION_HASH.fullmatch(tail)) or name_problem(env):
            continue
        path = versions / entry.name
        if not fs.is_real_dir(path):
            continue
        complete = (path / METADATA).is_file()
        reason = "a replaced version (unlinked)" if complete else "an unfinished build"
        out.append(Leftover(path, env, reason, folder_size(path) if sizes else 0))
    return out


def leftovers_of(location: EnvLocation) -> list[Path]:
    """This environment's version folders neither its link nor its previous link (kept for a
    rollback) points at (hold its lock)."""
    kept = {v.name for v in (location.linked_version(), location.previous_version()) if v}
    return [
        location.versions / e.name
        for e in _entries(location.versions)
        if location.is_version_name(e.name)
        and e.name not in kept
        and fs.is_real_dir(location.versions / e.name)
    ]


# -- removal ----------------------------------------------------------------------------------


def remove_environment(location: EnvLocation) -> Path:
    """Remove a named environment: its link and the folders gpuenv built for it.

    Only a link gpuenv made is removed, never what an alias or a foreign link points to; the
    folders removed are real folders inside the store (gpuenv.envs.fs).
    """
    link = location.link
    if not fs.lexists(link):
        raise EnvironmentNotFound(f"no gpuenv environment at {link}")
    if location.own_target() is None:  # refused before anything, even a lock file, is made
        raise StoreInputError(_not_ours_message(location))
    try:
        return _remove_locked(location)
    except OSError as exc:
        raise fs.removal_error(exc, str(link)) from exc


def _remove_locked(location: EnvLocation) -> Path:
    from gpuenv.envs.filelock import exclusive, timeout_from_env

    link = location.link
    with exclusive(location.lock_path, timeout=timeout_from_env(), what=location.name):
        target = location.linked_version()
        if target is None and remove_dangling_link(location):
            return link
        if target is None:
            raise StoreInputError(_not_ours_message(location))
        previous = location.previous_version()
        folders = [target, *([previous] if previous else []), *leftovers_of(location)]
        for folder in folders:  # every check before the first change
            fs.check_removable(folder, location.root)
        fs.remove_link(link)
        if fs.is_link(location.previous_link):
            fs.remove_link(location.previous_link)
        for folder in folders:
            fs.remove_tree(folder, location.root)
    return target


def _not_ours_message(location: EnvLocation) -> str:
    return (
        f"{location.link} is {why_not_ours(location)}; gpuenv removes only what it made, so it"
        " leaves this alone (remove it yourself if you mean to)"
    )


def remove_leftover(leftover: Leftover) -> bool:
    """Remove one leftover version folder, unless an install of its environment is running."""
    from gpuenv.envs.errors import LockTimeout
    from gpuenv.envs.filelock import exclusive

    location = EnvLocation.named(leftover.env)
    try:
        with exclusive(location.lock_path, timeout=0, what=location.name):
            if leftover.path in leftovers_of(location):  # still one, now that we hold the lock
                fs.remove_tree(leftover.path, location.root)
                return True
    except LockTimeout:
        return False
    except OSError as exc:
        raise fs.removal_error(exc, str(leftover.path)) from exc
    return False


def remove_stale_workdir(path: Path) -> bool:
    """Remove a work folder a killed lock or install left, if its process is still gone."""
    from gpuenv.fs.workdir import stale_workdirs, work_root

    if path not in stale_workdirs():  # checked again now: that run may have been slow, not dead
        return False
    try:
        fs.remove_tree(path, work_root())
    except OSError as exc:
        raise fs.removal_error(exc, str(path)) from exc
    return True


def remove_dangling_link(location: EnvLocation) -> bool:
    """A link gpuenv made whose version folder is gone: remove the link (nothing else)."""
    target = location.own_target()
    if target is None or fs.lexists(target):
        return False
    fs.remove_link(location.link)
    return True


def what_is_there(where: EnvLocation) -> Optional[str]:
    """What a new install at `where` replaces, in words; None where nothing is there yet."""
    current = where.current()
    if current is None:
        return None
    try:
        old = read_metadata(current).get("stack") or {}
    except (InstallError, OSError):  # an unreadable one is replaced too, as install says
        return "what is there"
    from gpuenv.output import shown  # the metadata on disk is untrusted

    stack = ", ".join(f"{n} {v}" for n, v in sorted(old.items()))
    return f"the environment there ({shown(stack) or 'no frameworks'})"
