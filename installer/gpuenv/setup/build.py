"""Setup's build step: lock the plan (unless its lockfile exists), install it, verify it.

A new lockfile is written aside and becomes the recorded one only once its environment is live:
an interrupted setup leaves the old environment with its own lockfile. verify runs once, as the
check before the swap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Protocol

if TYPE_CHECKING:
    from gpuenv.envs.python_check import PythonLookup
    from gpuenv.envs.store import EnvLocation
    from gpuenv.envs.transaction import InstallResult
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock import LockOptions
    from gpuenv.lock.model import LockedEnvironment
    from gpuenv.setup.planning import SetupPlan
    from gpuenv.verify import Report


class Reporter(Protocol):
    """Where setup's progress goes: notes, download progress, the end of the downloads."""

    def say(self, message: str) -> None: ...

    def progress(self, name: str, done: int, total: Optional[int]) -> None: ...

    def done_downloading(self) -> None: ...


@dataclass(frozen=True)
class Built:
    locked: LockedEnvironment
    result: InstallResult
    verdict: Report


def lock_install_verify(
    chosen: SetupPlan,
    location: EnvLocation,
    indexes: IndexConfig,
    *,
    portable: bool,
    name: str,
    reporter: Reporter,
    allow_any_origin: bool = False,
) -> Built:
    from gpuenv.envs import early_python
    from gpuenv.envs.python_check import PythonLookup
    from gpuenv.envs.store import interpreter
    from gpuenv.setup import pending as pending_files
    from gpuenv.uv.binary import find_uv
    from gpuenv.verify import Expectations, verify_environment

    uv = find_uv()
    # uv looks for the plan's Python while gpuenv imports, locks and reads the lockfile (the
    # lockfile's Python is the plan's; conda packages bring their own)
    version = None if chosen.plan.conda else chosen.plan.python
    # with the answer uv's search gave last time, which the install may build on meanwhile
    guess = early_python.last_answer(uv, version) if version else None
    lookup = PythonLookup(uv, version, guess=guess)
    pending = None
    try:
        pending = (
            None if chosen.lockfile_exists else pending_files.pending_lockfile(chosen.lockfile)
        )
        locked = _locked(chosen, pending, indexes, portable=portable, name=name, say=reporter.say)
        # fail fast: before anything is downloaded. A lockfile read from disk (a lab's, or one
        # an earlier setup wrote) is untrusted: its files come only from where the user said.
        # One this run has just locked is uv's answer from the user's own indexes (its local
        # files checked by the lock): nothing to ask the indexes again.
        if pending is None:
            from gpuenv.envs.install_lockfile import check_lockfile_origins

            check_lockfile_origins(locked, indexes, allow_any_origin=allow_any_origin)
        result, verdicts = _install(locked, location, indexes, uv, lookup, reporter)
        if pending is not None:
            pending_files.promote_lockfile(pending, chosen.lockfile)
    finally:
        lookup.cancel()  # answered already, unless setup stopped first
        if pending is not None:
            pending_files.discard_pending(pending)
    if not verdicts:  # the environment was there already (built from this very lockfile)
        reporter.say("verifying inside the environment")
        expected = Expectations.from_plan(locked.plan)
        verdicts.append(verify_environment(interpreter(result.env_dir), expected))
    return Built(locked, result, verdicts[-1])


def _locked(
    chosen: SetupPlan,
    pending: Optional[Path],
    indexes: IndexConfig,
    *,
    portable: bool,
    name: str,
    say: Callable[[str], None],
) -> LockedEnvironment:
    """The lockfile to install: the one that exists (the lab's is read once already, for the
    plan), or a new one locked into `pending` and named by the file it becomes."""
    from gpuenv.lock import lock_plan
    from gpuenv.lock.load import load_locked

    if pending is not None:
        say(f"locking -> {chosen.lockfile}")
        lock_plan(chosen.plan, lock_options(chosen, pending, indexes, portable=portable, name=name))
    if pending is None and chosen.locked is not None:
        return chosen.locked
    return replace(load_locked(pending or chosen.lockfile), path=chosen.lockfile)


def _install(
    locked: LockedEnvironment,
    location: EnvLocation,
    indexes: IndexConfig,
    uv: str,
    lookup: PythonLookup,
    reporter: Reporter,
) -> tuple[InstallResult, list[Report]]:
    """The lockfile's files gathered, then the transaction, with verify as its smoke test."""
    from gpuenv.cache import cache_dir
    from gpuenv.envs.artifacts import artifacts_of, gather
    from gpuenv.envs.python_check import python_to_build_on
    from gpuenv.envs.transaction import install
    from gpuenv.verify import Expectations, import_failures, verify_environment

    base_python, confirm = python_to_build_on(locked, uv=uv, lookup=lookup)
    files = gather(
        artifacts_of(locked), cache=cache_dir(), indexes=indexes, progress=reporter.progress
    )
    reporter.done_downloading()
    expected = Expectations.from_plan(locked.plan)
    verdicts: list[Report] = []

    def verify_before_swap(python: Path) -> Optional[str]:
        """verify is the smoke test: one import of each framework, before the swap."""
        reporter.say("verifying inside the new environment")
        verdicts.append(verify_environment(python, expected))
        return import_failures(verdicts[-1])

    result = install(
        locked,
        location,
        files,
        uv=uv,
        say=reporter.say,
        check=verify_before_swap,
        base_python=base_python,
        confirm_python=confirm,
    )
    return result, verdicts


def lock_options(
    chosen: SetupPlan, pending: Path, indexes: IndexConfig, *, portable: bool, name: str
) -> LockOptions:
    """The lock of setup's own lockfile: written as `pending`, named in its header by the file
    it becomes; a lab class's lockfile is regenerated by `lock --lab`, setup's by setup."""
    import shlex

    from gpuenv.lock import LockOptions

    if chosen.lab_class is not None:
        return LockOptions(
            output=pending, portable=portable, indexes=indexes, named=chosen.lockfile
        )
    again = shlex.join(["gpuenv", "setup", "-n", name])
    return LockOptions(
        output=pending,
        portable=portable,
        indexes=indexes,
        named=chosen.lockfile,
        command=again,
        up_to_date=f"{again} again: a quick no-op when nothing changed",
    )
