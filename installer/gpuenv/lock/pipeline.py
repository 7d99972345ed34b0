"""The lock pipeline: a Plan and its options -> a lockfile, both formats; and whether a lockfile
is still what these inputs would make (`--check`)."""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from gpuenv.fs.atomic_write import check_output_path
from gpuenv.index.config import IndexConfig, user_index_config
from gpuenv.lock.conda import DEFAULT_CHANNELS
from gpuenv.lock.errors import LockError
from gpuenv.lock.names import PYLOCK, check_output
from gpuenv.lock.pypi import PipCompile, PipLock, pip_request
from gpuenv.lock.shared_answers import keep_answer, shared_answer
from gpuenv.resolve.plan import Plan

# What only writing a lockfile needs is imported where it is used, so that `gpuenv lock` has
# uv running before it loads them (uv needs only the plan and the index configuration).
if TYPE_CHECKING:
    from gpuenv.lock.conda import CondaArtifact
    from gpuenv.lock.model import LockInputs
    from gpuenv.lock.pypi import PipArtifact


@dataclass(frozen=True)
class LockOptions:
    output: Path
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    portable: bool = False
    exclude_newer: str = "auto"  # auto: the plan's era for old stacks; none; or a date
    machine_class: Optional[str] = None
    indexes: Optional[IndexConfig] = None  # None: the user's pip/uv configuration
    format: str = "conda-lock"  # or pylock (PEP 751, pip-only plans)
    command: Optional[str] = None  # the `gpuenv lock ...` that regenerates the file (its header)
    # False: the lockfile is for another machine, and a wheel only this machine has (a local
    # folder's) is an error rather than a path in it (LocalPathsError)
    local_paths: bool = True
    # the name the header gives the file, when it is written under another one first (setup
    # writes `.NAME.PID-XXXX.pending` and renames it once the environment is live)
    named: Optional[Path] = None
    up_to_date: Optional[str] = None  # the header's "Up to date?" line; None: `--check`


@dataclass(frozen=True)
class LockResult:
    path: Path
    plan: Plan
    inputs_hash: str
    pip_count: int
    conda_count: int
    exclude_newer: Optional[str]
    notes: tuple[str, ...] = field(default=())


def effective_exclude_newer(plan: Plan, option: str) -> Optional[str]:
    if option == "none":
        return None
    if option == "auto":
        return plan.exclude_newer
    try:
        return dt.date.fromisoformat(option).isoformat()
    except ValueError:
        raise LockError(
            f"--exclude-newer {option!r}: expected auto, none or a date (2024-06-30)"
        ) from None


def lock_inputs(plan: Plan, options: LockOptions, indexes: IndexConfig) -> LockInputs:
    from gpuenv.lock.model import LockInputs

    return LockInputs(
        plan=plan,
        channels=options.channels,
        portable=options.portable,
        exclude_newer=effective_exclude_newer(plan, options.exclude_newer),
        indexes=indexes.all_indexes() + indexes.find_links,
        machine_class=options.machine_class,
    )


def _refusal(plan: Plan, options: LockOptions) -> None:
    """Raise what lock_plan refuses of the output's name, the format and the options."""
    check_output(options.format, options.output)
    if options.format == PYLOCK and plan.conda:
        raise LockError(
            "this plan needs conda packages (" + ", ".join(plan.conda) + "); PEP 751 pylock.toml"
            " holds pip packages only: write a conda-lock file instead"
        )
    if options.format == PYLOCK and options.portable:
        raise LockError(
            "--portable cannot be written as pylock.toml: PEP 751 names every wheel by its URL,"
            " and uv and pip need it. Lock without --portable (the URLs of your index), or"
            " write a portable conda-lock file (--format conda-lock)."
        )


def start_pip_lock(
    plan: Plan, options: LockOptions, guessed: Optional[PipCompile] = None
) -> Optional[PipCompile]:
    """uv started on `plan`'s pip part now, for lock_plan to use if it locks the same pip part
    (`gpuenv lock` starts it on the plan resolved before the index probe answers, so uv and the
    probe run side by side). None when lock_plan would refuse these options, or uv does not
    start: lock_plan meets that again and says it, in its usual order. The caller cancels what
    lock_plan did not use. `guessed`: a run started before resolving (lock.last_request), kept
    when its request is this plan's, stopped otherwise."""
    try:
        check_output_path(options.output)
        indexes = options.indexes or user_index_config()
        exclude_newer = effective_exclude_newer(plan, options.exclude_newer)
        _refusal(plan, options)
        if options.portable:
            from gpuenv.lock.portability import configured_sources

            configured_sources(indexes)  # refused by lock_plan before uv runs
        request = pip_request(plan, indexes, exclude_newer)
        if guessed is not None and guessed.request == request:
            return guessed.adopt(plan)
        _drop(guessed)
        return PipCompile(request, plan)
    except Exception:
        _drop(guessed)
        return None


def _drop(guessed: Optional[PipCompile]) -> None:
    if guessed is not None:
        from gpuenv.output import debug

        guessed.cancel()
        debug("this lock's request to uv differs from its last run's: uv runs on this one")


def _result(started: Optional[PipCompile]) -> PipLock:
    assert started is not None  # lock_plan starts one when no answer is shared
    return started.result()


def lock_plan(
    plan: Plan,
    options: LockOptions,
    ideal: Optional[Plan] = None,
    started: Optional[PipCompile] = None,
) -> LockResult:
    """Lock `plan`. `ideal` is the plan resolve gives with every source reachable; when the
    sources forced a fallback, it differs, and `--check` compares against it (a fallback is
    not staleness). `started`: a uv run from start_pip_lock, used when it is this plan's (its
    request is the one this lock would make), cancelled otherwise."""
    from gpuenv.lock.conda import solve_conda
    from gpuenv.lock.conda_lock.write import build_lockfile, write_lockfile
    from gpuenv.lock.header import conda_lock_header, pylock_header
    from gpuenv.lock.model import PORTABLE_PREFIX
    from gpuenv.lock.portability import (
        configured_sources,
        not_portable,
        not_portable_notes,
        refuse_foreign_files,
    )

    try:
        check_output_path(options.output)  # refuse a device or a link before the work, not after
        indexes = options.indexes or user_index_config()
        inputs = lock_inputs(plan, options, indexes)
        intent = lock_inputs(ideal, options, indexes).digest() if ideal else inputs.digest()
        _refusal(plan, options)
        # gpuenv reads the user's index configuration itself to tell which wheels an index
        # publishes: a location it cannot read is refused now, before uv runs
        strict = not options.local_paths
        sources = configured_sources(indexes) if options.portable or strict else None
        request = pip_request(plan, indexes, inputs.exclude_newer)
    except BaseException:
        if started is not None:
            started.cancel()
        raise
    answered = shared_answer(request)  # another class of this lab lock made the same request
    if started is not None and (answered is not None or started.request != request):
        started.cancel()
        if answered is None:  # the probe changed the plan's pip part: lock what it allows
            from gpuenv.output import debug

            debug("the index probe changed the plan: uv runs again on the plan it allows")
        started = None
    if answered is None and started is None:
        started = PipCompile(request, plan)
    with started if started is not None else contextlib.nullcontext():
        if options.format != PYLOCK:
            import yaml  # type: ignore[import-untyped]  # noqa: F401  # the writer's, while uv works
        try:
            conda: list[CondaArtifact] = solve_conda(plan, channels=options.channels)
            failed: Optional[Exception] = None
        except Exception as exc:  # uv's failure is told first, as when uv ran alone first
            conda, failed = [], exc
        pip_lock = answered if answered is not None else _result(started)
        if failed is not None:
            raise failed
    keep_answer(request, pip_lock)
    pip = pip_lock.artifacts
    refuse_foreign_files(pip, indexes)  # uv's answer: only files the user's locations offered
    unchecked = _refuse_overlapping_wheels(pip, started)
    fallback = plan_changes(ideal, plan) if ideal else []
    # wheels no index publishes keep their own URL in a portable lockfile, and the lock says so
    local = not_portable(pip, sources) if sources is not None and options.portable else {}
    if not options.local_paths and sources is not None:
        from gpuenv.lock.portability import refuse_this_machine_only, this_machine_only

        pylock = options.format == PYLOCK
        only_here = this_machine_only(pip, sources, by_url=pylock or not options.portable)
        refuse_this_machine_only(pip, only_here, pylock=pylock)
    if options.format == PYLOCK:
        from gpuenv.lock.pylock.write import render_pylock, write_pylock

        tool = {
            "platform": plan.platform,
            "python": plan.python,
            "accelerator": plan.accelerator,
            "knowledge-base": plan.knowledge_base,
            "inputs-hash": inputs.digest(),
            "intent-hash": intent,
            "machine-class": options.machine_class,
            "fallback": "; ".join(fallback) or None,
        }
        header = pylock_header(
            options.named or options.output, plan, options.command, **_check_line(options)
        )
        text = render_pylock(plan, pip, tool, uv_pylock=pip_lock.uv_pylock, header=header)
        write_pylock(options.output, text)
    else:
        lockfile = build_lockfile(inputs, pip, conda, intent, fallback, local)
        portable = sum(
            1
            for p in lockfile["package"]
            if p["manager"] == "pip" and p["url"].startswith(PORTABLE_PREFIX)
        )
        header = conda_lock_header(
            options.named or options.output,
            plan,
            options.command,
            conda=len(conda),
            pip=len(pip),
            portable_pip=portable,
            not_portable=tuple(sorted(local)),
            **_check_line(options),
        )
        write_lockfile(lockfile, options.output, header)
    return LockResult(
        path=options.output,
        plan=plan,
        inputs_hash=inputs.digest(),
        pip_count=len(pip),
        conda_count=len(conda),
        exclude_newer=inputs.exclude_newer if pip_lock.cutoff_applied else None,
        notes=indexes.notes
        + pip_lock.notes
        + tuple(not_portable_notes(pip, local))
        + tuple(unchecked),
    )


def _refuse_overlapping_wheels(pip: list[PipArtifact], run: Optional[PipCompile]) -> list[str]:
    """Whatever the knowledge base predicted, no two locked wheels may write one file (the
    cu11/cu12/cu13 NVIDIA wheels of one library share a folder): WheelOverlapError, exit 1.
    `run`: the uv run that answered, with the RECORDs it had read while uv resolved."""
    from gpuenv.index.wheel_records import LockedWheel, default_reader, refuse_overlaps

    wheels = [LockedWheel(a.filename, a.url, a.sha256) for a in pip]
    reader = run.record_reader(default_reader) if run is not None else default_reader
    return refuse_overlaps(wheels, "the lock", reader)


def _check_line(options: LockOptions) -> dict[str, str]:
    return {"up_to_date": options.up_to_date} if options.up_to_date else {}


def check_lockfile(plan: Plan, options: LockOptions, fallback: str = "gpu") -> tuple[bool, str]:
    """Whether the lockfile at options.output was made from these inputs (no network), and
    holds no fallback that `fallback` (gpuenv.lock.fallback's policy) refuses."""
    indexes = options.indexes or user_index_config()
    expected = lock_inputs(plan, options, indexes).digest()
    if not options.output.exists():
        return False, f"{options.output} does not exist"
    from gpuenv.lock.load import load_locked

    locked = load_locked(options.output)
    if expected in (locked.intent_hash, locked.inputs_hash):
        from gpuenv.lock.fallback import refused_fallback

        refused = refused_fallback(plan, locked.plan, fallback)
        if refused:
            return False, f"{options.output} is not what its plan wants: {refused}"
        return True, f"{options.output} is up to date"
    from gpuenv.lock.staleness import stale_causes

    changes = stale_causes(locked, plan)
    return False, f"{options.output} is stale: " + (
        "; ".join(changes) or "its lock options changed"
    )


def plan_changes(old: Plan, new: Plan) -> list[str]:
    """What differs between two plans, for people ("torch 2.7.1 [cu118] -> 2.6.0 [cu118]")."""
    out = []
    if old.python != new.python:
        out.append(f"Python {old.python} -> {new.python}")
    for name in sorted(set(old.frameworks) | set(new.frameworks)):
        a, b = old.frameworks.get(name), new.frameworks.get(name)
        before = f"{a.version} [{a.variant}]" if a else "absent"
        after = f"{b.version} [{b.variant}]" if b else "absent"
        if before != after:
            out.append(f"{name} {before} -> {after}")
    if old.companions != new.companions or old.constraints != new.constraints:
        out.append("companion pins changed")
    return out
