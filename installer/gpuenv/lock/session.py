"""`gpuenv lock`'s head start: uv starts on the plan resolved as if every source answered, and
the index probe runs beside it; lock_plan uses that uv run when the probe leaves the pip part as
it was, and it is cancelled otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.pipeline import LockOptions, LockResult
    from gpuenv.lock.pypi import PipCompile
    from gpuenv.machine import Machine
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.resolve.plan import Plan


@dataclass(frozen=True)
class SourcedLock:
    """The plan the reachable sources allow (`ideal`: with every source reachable), what the
    probe noted, the fallback it forced, and uv's run started early (None: none started)."""

    plan: Plan
    ideal: Plan
    notes: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()
    early: Optional[PipCompile] = None

    def lock(self, options: LockOptions) -> LockResult:
        """Lock the plan (with the early uv run when it is this plan's); the early run never
        outlives this call."""
        from gpuenv.lock import lock_plan

        try:
            return lock_plan(self.plan, options, self.ideal, started=self.early)
        finally:
            self.cancel()

    def cancel(self) -> None:
        if self.early is not None:  # not used (a failure, or the probe changed the plan)
            self.early.cancel()


def probe_beside_uv(
    machine: Machine,
    requirements: tuple[str, ...],
    ideal: Plan,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    options: LockOptions,
    *,
    fallback: str,
    guessed: Optional[PipCompile] = None,
    **resolve_args: Any,
) -> SourcedLock:
    """uv started on `ideal` (or `guessed`, a run started before resolving, when it is
    `ideal`'s: lock.last_request), then the probe; the early run is cancelled if the probe
    fails."""
    from gpuenv.lock import start_pip_lock

    early = start_pip_lock(ideal, options, guessed)
    try:
        # the probe and its HTTP client load while uv works, not before it starts
        from gpuenv.lock.availability import resolve_with_sources

        sourced = resolve_with_sources(
            machine, requirements, kb, indexes, ideal=ideal, fallback=fallback, **resolve_args
        )
    except BaseException:
        if early is not None:
            early.cancel()
        raise
    return SourcedLock(
        sourced.plan, sourced.ideal, tuple(sourced.notes()), tuple(sourced.fallback), early
    )
