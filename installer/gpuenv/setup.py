"""`gpuenv setup`: detect, resolve (or pick the lab class's lockfile), lock, install, verify.

Every step is the same code as its own command; setup only chains them and remembers what it
did (`<store>/.setup/<name>.json`), so a second run with nothing changed is a quick no-op.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from gpuenv.envs.errors import InstallError
from gpuenv.envs.store import store_root
from gpuenv.index.config import IndexConfig
from gpuenv.lab.load import Lab, LabError, lab_class_plan, with_packages
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS, Plan
from gpuenv.versions import major_minor, version_key

if TYPE_CHECKING:  # the no-op check imports this module: no lockfile stack for it
    from gpuenv.lock.model import LockedEnvironment

Say = Callable[[str], None]


@dataclass(frozen=True)
class SetupOptions:
    requirements: tuple[str, ...]
    name: str
    lab: Optional[Lab] = None
    python: Optional[str] = None
    no_gpu: bool = False
    require_gpu: bool = False
    dry_run: bool = False
    force: bool = False
    packages: tuple[str, ...] = ()  # extra packages locked beside the frameworks
    jupyter: bool = False  # also install ipykernel and register a kernel
    allow_cpu_fallback: bool = False  # a CPU build where the planned GPU one cannot be locked

    @property
    def wants_kernel(self) -> bool:
        return self.jupyter or bool(self.lab and self.lab.jupyter)

    def extra_packages(self) -> tuple[str, ...]:
        """The lab's packages, then this command's (a later one for a project wins), and
        ipykernel when a kernel is wanted."""
        from gpuenv.resolve.packages import merge_packages

        kernel = ("ipykernel",) if self.jupyter else ()
        return merge_packages(self.lab.packages if self.lab else (), self.packages, kernel)


@dataclass(frozen=True)
class SetupPlan:
    """What setup is going to install, and from which lockfile."""

    plan: Plan
    lockfile: Path
    lab_class: Optional[str]
    notes: tuple[str, ...]
    lockfile_exists: bool
    locked: Optional[LockedEnvironment] = None  # the lockfile as read for the plan, if it exists


def state_path(name: str) -> Path:
    """Where setup records environment `name`; the name is checked first (a plain store name),
    so `add -n ../../x` never becomes a path outside the store."""
    from gpuenv.envs.store import check_name

    return store_root() / ".setup" / f"{check_name(name)}.json"


def inputs_hash(
    machine: Machine, opts: SetupOptions, kb: KnowledgeBase, indexes: IndexConfig
) -> str:
    described = machine.to_json()
    described.pop("pythons", None)  # interpreters come and go without changing the plan
    described.pop("notes", None)
    data = {
        "machine": described,
        "requirements": list(opts.requirements),
        "lab": hashlib.sha256(opts.lab.path.read_bytes()).hexdigest() if opts.lab else None,
        "python": opts.python,
        "no_gpu": opts.no_gpu,
        "require_gpu": opts.require_gpu,
        "packages": list(opts.packages),
        "jupyter": opts.jupyter,
        # only when given, so that setups recorded before the option stay unchanged
        **({"allow_cpu_fallback": True} if opts.allow_cpu_fallback else {}),
        "knowledge_base": kb.digest,
        "indexes": [*indexes.all_indexes(), *indexes.find_links],
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


MAX_RECORD_BYTES = 4 << 20  # a record is a few kB; a huge one is not setup's


def read_state(name: str) -> dict[str, Any]:
    """What setup recorded for `name`; {} when there is nothing usable. Read through the bounded,
    non-blocking reader (a FIFO, /dev/zero, a link or a 3 GB file there is no record, not a
    hang), and only a JSON object counts."""
    from gpuenv.fs import strict_json
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    path = state_path(name)
    if not os.path.lexists(path):
        return {}
    try:
        raw = read_bounded(path, MAX_RECORD_BYTES, "setup record", follow_links=False)
        data = strict_json.loads(raw.decode("utf-8"))
    except (UnsafePathError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(name: str, data: dict[str, Any]) -> None:
    from gpuenv.fs.atomic_write import OutputPathError, OutputWriteError, atomic_write_text

    path = state_path(name)
    try:
        # the one atomic writer: a link planted at `.setup` or at the record is refused, not
        # written through
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write_text(path, text, root=store_root())
    except (OutputPathError, OutputWriteError) as exc:
        raise SetupRecordError(
            f"could not record setup's state in {path}: {_reason(exc)}; the environment itself"
            " is installed"
        ) from None


def _reason(exc: Exception) -> str:
    from gpuenv.fs.atomic_write import OutputWriteError

    if isinstance(exc, OutputWriteError) and exc.reason:
        return f"{exc.reason}: free space or make it writable"
    return str(exc)


class SetupRecordError(InstallError):
    """Setup could not write what it records (its state, the lockfile): exit 1."""


def pending_lockfile(final: Path) -> Path:
    """Where setup writes a new lockfile until its environment is live: beside `final` (so
    moving it into place is one rename), under a name no other run uses. Those a killed setup
    left are removed first."""
    remove_stale_pending(final)
    return final.with_name(f".{final.name}.{os.getpid()}-{secrets.token_hex(4)}.pending")


_STALE_AFTER = 24 * 3600.0  # where a pid cannot be checked (Windows): older than a day


def remove_stale_pending(final: Path) -> list[Path]:
    """Pending lockfiles of `final` whose setup is gone (killed): a regular file, named as
    pending_lockfile names them, whose pid no longer runs."""
    pattern = re.compile(re.escape(f".{final.name}.") + r"(\d+)-[0-9a-f]{8}\.pending")
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(final.parent):
            found = pattern.fullmatch(entry.name)
            if found is None or not entry.is_file(follow_symlinks=False):
                continue
            if _still_running(int(found.group(1)), entry.stat(follow_symlinks=False).st_mtime):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _still_running(pid: int, mtime: float) -> bool:
    if sys.platform == "win32":  # os.kill would end the process there
        return time.time() - mtime < _STALE_AFTER
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but not ours to signal
    return True


def promote_lockfile(pending: Path, final: Path) -> None:
    """The environment built from `pending` is live: from now on it is the recorded lockfile."""
    try:
        os.replace(pending, final)
    except OSError as exc:
        raise SetupRecordError(
            f"the environment is installed, but its lockfile could not be moved to {final}"
            f" ({exc.strerror}); it is at {pending}"
        ) from exc


def discard_pending(pending: Path) -> None:
    with contextlib.suppress(OSError):
        pending.unlink()


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

    uv = find_uv()
    found = subprocess.run(
        [uv, "python", "find", version], capture_output=True, text=True, check=False
    )
    if found.returncode == 0:
        return True
    if not may_install:  # a dry run plans what the real run would: could uv download it?
        if os.environ.get("UV_PYTHON_DOWNLOADS", "").lower() == "never":
            return False
        offered = subprocess.run(
            [uv, "python", "list", version, "--only-downloads"],
            capture_output=True,
            text=True,
            check=False,
        )
        if offered.returncode != 0 or not offered.stdout.strip():
            return False
        say(f"Python {version} is not installed: the real run would ask uv to download it")
        return True
    say(f"Python {version} is not installed; asking uv to install it")
    from gpuenv.output import log_command

    log_command([uv, "python", "install", version])
    try:
        got = subprocess.run(
            [uv, "python", "install", version],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return got.returncode == 0


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
