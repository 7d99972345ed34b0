"""`gpuenv lock --lab`: each machine class's lockfile (always portable), or with `check`, which
are missing or stale. One class failing never stops the others; each outcome is handed to the
caller as soon as it is known (a lab's locks take minutes)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional

if TYPE_CHECKING:
    from gpuenv.index.config import IndexConfig
    from gpuenv.lab.load import Lab, MachineClass
    from gpuenv.lock import LockOptions
    from gpuenv.lock.pipeline import LockResult
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.resolve.plan import Plan


@dataclass(frozen=True)
class LabSwitches:
    """The command line's word on every class of a lab."""

    allow_cpu_fallback: bool = False  # widen each class's `fallback` to "cpu"
    require_gpu: bool = False  # a GPU class that cannot get the GPU fails (exit 3)
    no_probe: bool = False  # lock each class's plan as resolved, without asking the indexes


Status = Literal["up_to_date", "missing", "stale", "locked", "failed"]


@dataclass(frozen=True)
class ClassOutcome:
    """One class: checked (`up_to_date`, `missing`, `stale`), `locked`, or `failed` (its
    error's exit status in `exit_status`)."""

    name: str
    status: Status
    lockfile: Path
    message: str = ""  # the check's verdict, or the failure
    plan: Optional[Plan] = None
    ideal: Optional[Plan] = None  # the plan with every source reachable
    result: Optional[LockResult] = None
    fallback: tuple[str, ...] = ()  # what the sources did not give, and what replaced it
    before_sha256: Optional[str] = None  # the lockfile's hash before it was written
    exit_status: int = 0

    @property
    def ok(self) -> bool:
        return self.status in ("up_to_date", "locked")


def lock_classes(
    lab: Lab,
    class_names: tuple[str, ...],
    *,
    check: bool,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    channels: tuple[str, ...],
    switches: LabSwitches = LabSwitches(),
    done: Callable[[ClassOutcome], None] = lambda _: None,
) -> list[ClassOutcome]:
    """Each named class (every class when none is named), in order, each once."""
    from gpuenv.errors import exit_code
    from gpuenv.lock.shared_answers import shared_answers

    names = dict.fromkeys(class_names)
    classes = [lab.find_class(n) for n in names] if names else list(lab.classes)
    outcomes = []
    with shared_answers():  # classes with one pip request share one uv run
        for cls in classes:
            options = _options(lab, cls, indexes, channels)
            fallen: list[str] = []
            try:
                if check:
                    outcome = _check_class(lab, cls, options, kb, switches)
                else:
                    outcome = _lock_class(lab, cls, options, kb, indexes, switches, fallen)
            except Exception as exc:
                status = exit_code(exc)
                if status is None:
                    raise
                outcome = ClassOutcome(
                    cls.name,
                    "failed",
                    options.output,
                    str(exc),
                    fallback=tuple(fallen),
                    exit_status=status or 1,
                )
            done(outcome)
            outcomes.append(outcome)
    return outcomes


def exit_status(outcomes: list[ClassOutcome]) -> int:
    """0 when every class is fine; one cause for every failure (all unreachable: 5, all stale:
    1) keeps its status; a mix is a failed lock (1)."""
    statuses = {o.exit_status for o in outcomes if not o.ok}
    if not statuses:
        return 0
    return statuses.pop() if len(statuses) == 1 else 1


def _options(
    lab: Lab, cls: MachineClass, indexes: IndexConfig, channels: tuple[str, ...]
) -> LockOptions:
    from gpuenv.lock import LockOptions
    from gpuenv.lock.conda import DEFAULT_CHANNELS

    return LockOptions(
        command=shlex.join(["gpuenv", "lock", "--lab", str(lab.path), "--class", cls.name]),
        output=lab.lockfile(cls),
        channels=channels or DEFAULT_CHANNELS,
        portable=True,
        indexes=indexes,
        machine_class=cls.name,
    )


def _resolved(lab: Lab, cls: MachineClass, kb: KnowledgeBase, switches: LabSwitches) -> Plan:
    """The class's plan as resolved here, without asking the indexes."""
    from gpuenv.lab.load import class_requires_gpu, with_packages
    from gpuenv.resolve import resolve

    require = class_requires_gpu(cls, switches.require_gpu)
    plan = resolve(cls.machine(), lab.requirements, kb=kb, python=lab.python, require_gpu=require)
    return with_packages(plan, lab.packages)


def _check_class(
    lab: Lab, cls: MachineClass, options: LockOptions, kb: KnowledgeBase, switches: LabSwitches
) -> ClassOutcome:
    from gpuenv.lab.load import class_policy
    from gpuenv.lock import check_lockfile

    plan = _resolved(lab, cls, kb, switches)
    policy = class_policy(cls, switches.allow_cpu_fallback)
    ok, message = check_lockfile(plan, options, policy)
    missing = not options.output.exists()
    status: Status = "up_to_date" if ok else ("missing" if missing else "stale")
    return ClassOutcome(cls.name, status, options.output, message, plan, exit_status=0 if ok else 1)


def _lock_class(
    lab: Lab,
    cls: MachineClass,
    options: LockOptions,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    switches: LabSwitches,
    fallen: list[str],
) -> ClassOutcome:
    """Lock one class; `fallen` gets its fallback lines as soon as they are known (a failed
    lock still shows them)."""
    from gpuenv.fs.file_hash import file_sha256
    from gpuenv.lab.load import ClassPlan, lab_class_plan
    from gpuenv.lock import lock_plan

    if switches.no_probe:
        plan = _resolved(lab, cls, kb, switches)
        chosen = ClassPlan(plan, plan)
    else:
        chosen = lab_class_plan(
            lab,
            cls.name,
            kb,
            indexes,
            allow_cpu_fallback=switches.allow_cpu_fallback,
            require_gpu=switches.require_gpu,
        )
    fallen += chosen.fallback
    before = file_sha256(options.output)
    result = lock_plan(chosen.plan, options, chosen.ideal)
    return ClassOutcome(
        cls.name,
        "locked",
        options.output,
        plan=chosen.plan,
        ideal=chosen.ideal,
        result=result,
        fallback=tuple(chosen.fallback),
        before_sha256=before,
    )
