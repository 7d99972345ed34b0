"""The plan and the lockfile for this machine: the lab class's (read once, so what is shown is
what is installed), or one resolved here against what the reachable sources publish, for a
Python this machine has or uv can fetch."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from gpuenv.envs.store import store_root
from gpuenv.index.config import IndexConfig
from gpuenv.lab.load import LabError, lab_class_plan, with_packages
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS, Plan
from gpuenv.setup.options import SetupOptions
from gpuenv.versions import major_minor, version_key

if TYPE_CHECKING:  # the no-op check imports this module: no lockfile stack for it
    from gpuenv.lock.model import LockedEnvironment

Say = Callable[[str], None]


@dataclass(frozen=True)
class SetupPlan:
    """What setup is going to install, and from which lockfile."""

    plan: Plan
    lockfile: Path
    lab_class: Optional[str]
    notes: tuple[str, ...]
    lockfile_exists: bool
    locked: Optional[LockedEnvironment] = None  # the lockfile as read for the plan, if it exists


def plan_setup(
    machine: Machine, opts: SetupOptions, kb: KnowledgeBase, indexes: IndexConfig, say: Say
) -> SetupPlan:
    """The plan and the lockfile for this machine: the lab class's, or one made here."""
    if opts.lab is not None and not opts.requirements:
        if opts.packages or opts.jupyter:
            raise LabError(
                f"{opts.lab.path} decides this machine's stack: add extra packages to its [stack]"
                " packages (and `jupyter = true` for a kernel), then `gpuenv lock --lab`"
            )
        cls = opts.lab.class_for(machine)
        lockfile = opts.lab.lockfile(cls)
        notes = [f"lab class {cls.name} (from {opts.lab.path.name}): this machine fits it"]
        if lockfile.exists():
            from gpuenv.lock.load import load_locked

            locked = load_locked(lockfile)  # read once: what is shown is what is installed
            return SetupPlan(locked.plan, lockfile, cls.name, tuple(notes), True, locked)
        notes.append(f"{lockfile} does not exist yet: it will be locked for this class")
        chosen = lab_class_plan(
            opts.lab,
            cls.name,
            kb,
            indexes,
            allow_cpu_fallback=opts.allow_cpu_fallback,
            require_gpu=opts.require_gpu,
        )
        notes += [f"fallback: {line}" for line in chosen.fallback]
        return SetupPlan(chosen.plan, lockfile, cls.name, tuple(notes), False)
    requirements = opts.requirements or (
        opts.lab.requirements if opts.lab else DEFAULT_REQUIREMENTS
    )
    plan, notes = _resolve_here(machine, requirements, opts, kb, indexes, say)
    lockfile = store_root() / ".setup" / f"{opts.name}.lock.yml"
    return SetupPlan(plan, lockfile, None, tuple(notes), False)


def _resolve_here(
    machine: Machine,
    requirements: tuple[str, ...],
    opts: SetupOptions,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    say: Say,
) -> tuple[Plan, list[str]]:
    from gpuenv.lock import plan_changes
    from gpuenv.lock.availability import resolve_with_sources
    from gpuenv.lock.fallback import check_fallback, policy_for
    from gpuenv.resolve import ResolveError, resolve

    args: dict[str, Any] = dict(no_gpu=opts.no_gpu, require_gpu=opts.require_gpu)
    sourced = resolve_with_sources(
        machine,
        requirements,
        kb,
        indexes,
        python=opts.python,
        fallback=policy_for(opts.allow_cpu_fallback),
        **args,
    )
    plan = sourced.plan
    notes: list[str] = list(sourced.fresh)
    changes = plan_changes(sourced.ideal, plan)
    if changes:  # say what the reachable sources changed against what `gpuenv resolve` prints
        unreachable = [n for n in sourced.notes() if n not in sourced.fresh]
        why = "; ".join(unreachable) or "the configured indexes lack the newer files"
        notes.append(f"what the sources publish changed the plan ({'; '.join(changes)}): {why}")
        notes += [f"fallback: {line}" for line in sourced.fallback]
    plan = with_packages(plan, opts.extra_packages())
    if opts.python or python_available(plan.python, machine, say, may_install=not opts.dry_run):
        return plan, notes
    # The newest stack wants a Python this machine lacks and uv could not fetch: plan for the
    # newest interpreter that is here instead, and say so.
    present = sorted(
        {major_minor(p.version) for p in machine.pythons}, key=version_key, reverse=True
    )
    for version in present:
        try:
            fallback = resolve(
                machine, requirements, kb=kb, python=version, available=sourced.available, **args
            )
        except ResolveError:
            continue
        # the Python here must not cost the GPU silently either: the same policy as above,
        # against what this Python would get with every source reachable
        ideal = resolve(machine, requirements, kb=kb, python=version, **args)
        policy = policy_for(opts.allow_cpu_fallback)
        notes += [
            f"fallback: {line}"
            for line in check_fallback(ideal, fallback, policy, cpu_flag="--allow-cpu-fallback")
        ]
        notes.append(
            f"Python {plan.python} is not on this machine and uv could not install it; planned"
            f" for Python {version}, which is (pass --python to choose)"
        )
        return with_packages(fallback, opts.extra_packages()), notes
    notes.append(f"Python {plan.python} is not on this machine; installing will need it")
    return plan, notes


def python_available(version: str, machine: Machine, say: Say, *, may_install: bool) -> bool:
    """Present, or provided by uv (which may download it, unless this is a dry run)."""
    if any(major_minor(p.version) == version for p in machine.pythons):
        return True
    from gpuenv.uv.binary import find_uv
    from gpuenv.uv.question import ask_uv

    uv = find_uv()
    # the question the install asks (envs.early_python): a virtual environment's Python, or a
    # project's pin, is never what an install builds on
    found = ask_uv([uv, "python", "find", "--system", "--no-project", version], timeout=60)
    if found is not None and found.returncode == 0:
        return True
    if not may_install:  # a dry run plans what the real run would: could uv download it?
        if os.environ.get("UV_PYTHON_DOWNLOADS", "").lower() == "never":
            return False
        offered = ask_uv([uv, "python", "list", version, "--only-downloads"], timeout=60)
        if offered is None or offered.returncode != 0 or not offered.stdout.strip():
            return False
        say(f"Python {version} is not installed: the real run would ask uv to download it")
        return True
    say(f"Python {version} is not installed; asking uv to install it")
    from gpuenv.output import log_command

    log_command([uv, "python", "install", version])
    got = ask_uv([uv, "python", "install", version], timeout=600)
    return got is not None and got.returncode == 0
