"""A lockfile becomes an environment: the install workflow, shared by `gpuenv install` and the API.

Where, whether there is anything to do, the lockfile read and checked (platform, the user's
consent to replace another stack, where its files come from, the Python it needs), its files
gathered, then the transaction. No click and no printing: progress goes to the callbacks given,
and every refusal is a GpuenvError with its exit status.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional

from gpuenv.envs.errors import StoreInputError

if TYPE_CHECKING:
    from gpuenv.envs.store import EnvLocation
    from gpuenv.envs.transaction import InstallResult
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.model import LockedEnvironment

Say = Callable[[str], None]
Progress = Callable[[str, int, Optional[int]], None]

DEFAULT_NAME = "default"

_LOCK_SUFFIXES = (".conda-lock.yml", ".conda-lock.yaml", ".lock.yml", ".lock.yaml", ".yml", ".yaml")


def name_from_lockfile(lockfile: Path) -> str:
    """The environment `gpuenv install LOCKFILE` makes without --name: the lockfile's own name
    (jax.conda-lock.yml -> jax, pylock.lab.toml -> lab), so installing a lockfile never lands
    in another stack's `default` by accident; `default` where the name is no valid one."""
    from gpuenv.envs.store import name_problem

    name = lockfile.name
    if name.startswith("pylock.") and name.endswith(".toml"):
        name = name[len("pylock.") : -len(".toml")] or DEFAULT_NAME
    else:
        for suffix in _LOCK_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                break
    return DEFAULT_NAME if name_problem(name) else name


def env_location(name: Optional[str], prefix: Optional[Path]) -> EnvLocation:
    """The environment a name or a prefix designates (default: the `default` one); both, a bad
    name or a bad prefix is a StoreInputError (exit 2), raised before any folder is made."""
    from gpuenv.envs.store import EnvLocation

    if name is not None and prefix is not None:
        raise StoreInputError("--name and --prefix exclude each other")
    if prefix is not None:
        return EnvLocation.prefix(prefix)
    return EnvLocation.named(DEFAULT_NAME if name is None else name)


@dataclass(frozen=True)
class LockfileInstall:
    """What an install of a lockfile did: `unchanged` (the environment there was built from
    exactly this file), `dry-run` (checked, nothing changed) or `installed`.

    `locked` is None only when unchanged (the file was not parsed); `result` is None unless
    installed; `replaced` names the stack that was (or would be) replaced, if any."""

    status: Literal["unchanged", "dry-run", "installed"]
    where: EnvLocation
    raw: bytes
    locked: Optional[LockedEnvironment] = None
    result: Optional[InstallResult] = None
    replaced: Optional[str] = None


def install_lockfile(
    lockfile: Path,
    where: EnvLocation,
    *,
    offline: bool = False,
    wheelhouse: Optional[Path] = None,
    smoke: bool = True,
    lock_timeout: Optional[float] = None,
    extra_indexes: tuple[str, ...] = (),
    channels: tuple[str, ...] = (),
    allow_any_origin: bool = False,
    replace: bool = False,
    dry_run: bool = False,
    say: Say = lambda _: None,
    progress: Optional[Progress] = None,
    done_downloading: Callable[[], None] = lambda: None,
    notice: Optional[Say] = None,
) -> LockfileInstall:
    """Install `lockfile` at `where`, atomically; nothing to do if it is already there."""
    from gpuenv.envs import early_python
    from gpuenv.envs.python_check import python_hint
    from gpuenv.envs.transaction import check_location, tidy_leftovers, up_to_date
    from gpuenv.lock.load import read_lockfile_bytes
    from gpuenv.uv.binary import find_uv

    if offline and wheelhouse is None:
        raise StoreInputError("offline install needs a wheelhouse (a folder `gpuenv fetch` filled)")
    check_location(where)  # before anything is downloaded or a folder made
    raw = read_lockfile_bytes(lockfile)  # bounded: a pipe or /dev/zero is refused, not read
    if up_to_date(hashlib.sha256(raw).hexdigest(), where):
        tidy_leftovers(where)
        return LockfileInstall("unchanged", where, raw)
    uv = find_uv()
    # uv looks for the Python the file names while gpuenv imports its lockfile stack and parses
    # and checks the file; the parsed file decides whether uv's answer is used
    with early_python.lookup(uv, python_hint(raw)) as lookup:
        from gpuenv.cache import cache_dir
        from gpuenv.envs.artifacts import artifacts_of, gather
        from gpuenv.envs.consent import replace_refusal
        from gpuenv.envs.inventory import what_is_there
        from gpuenv.envs.python_check import python_to_build_on
        from gpuenv.envs.transaction import check_platform, install
        from gpuenv.index.config import user_index_config, with_indexes
        from gpuenv.lock.load import load_locked

        locked = load_locked(lockfile, raw)
        check_platform(locked)
        refusal = (
            None
            if replace
            else replace_refusal(where, locked.plan.frameworks, locked.plan.accelerator)
        )
        if refusal:
            raise StoreInputError(refusal)
        # with a wheelhouse, every file is the wheelhouse's: no URL is used, no index read
        indexes = None if wheelhouse else with_indexes(user_index_config(), extra_indexes)
        if indexes is not None:
            check_lockfile_origins(
                locked, indexes, channels=channels, allow_any_origin=allow_any_origin
            )
        if dry_run:
            return LockfileInstall("dry-run", where, raw, locked, replaced=what_is_there(where))
        # Where the last install's search answered this question, the venv is built on that
        # interpreter while this search runs, and built again should it answer otherwise; else
        # the answer comes first, before any download (a missing Python is refused then).
        base_python, confirm = python_to_build_on(locked, uv=uv, lookup=lookup, offline=offline)

        replaced = what_is_there(where)
        if replaced:  # said before any download: the old environment stays until the switch
            say(f"replacing {replaced} at {where.link} with {stack_text(locked)}")
        files = gather(
            artifacts_of(locked),
            cache=cache_dir(),
            wheelhouse=wheelhouse,
            indexes=indexes,
            progress=progress,
        )
        done_downloading()
        result = install(
            locked,
            where,
            files,
            uv=uv,
            smoke=smoke,
            say=say,
            lock_timeout=lock_timeout,
            notice=notice,
            base_python=base_python,
            confirm_python=confirm,
        )
    return LockfileInstall("installed", where, raw, locked, result, replaced)


def check_lockfile_origins(
    locked: LockedEnvironment,
    indexes: IndexConfig,
    *,
    channels: tuple[str, ...] = (),
    allow_any_origin: bool = False,
) -> None:
    """Refuse a lockfile whose files come from anywhere the user did not configure (exit 2),
    unless allow_any_origin."""
    if allow_any_origin:
        return
    from gpuenv.envs.origins import check_origins, user_origins

    check_origins(locked, user_origins(indexes, channels=channels))


def stack_text(locked: LockedEnvironment) -> str:
    """The lockfile's stack, as text safe to print (the file is untrusted)."""
    from gpuenv.output import shown

    return shown(
        ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in locked.plan.frameworks.items())
    )
