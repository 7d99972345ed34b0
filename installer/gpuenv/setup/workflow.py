"""`gpuenv setup` and `gpuenv add`, start to end: the request (merged with what earlier runs
recorded), the no-op check, the plan, the build (lock, install, verify) and the record.

No click and no rendering: notes and progress go to the Reporter, the outcome is returned, and
every refusal is a GpuenvError with its exit status.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional

from gpuenv.setup.build import Reporter
from gpuenv.setup.options import SetupOptions, SetupRequest, merge_request
from gpuenv.setup.record import SetupRecord, inputs_hash, read_record

if TYPE_CHECKING:
    from gpuenv.envs.store import EnvLocation
    from gpuenv.index.config import IndexConfig
    from gpuenv.lab.load import Lab
    from gpuenv.machine import Machine
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.setup.planning import SetupPlan
    from gpuenv.verify import Report


@dataclass(frozen=True)
class SetupRun:
    """What one `gpuenv setup` (or `add`) was asked for."""

    requirements: tuple[str, ...]
    name: str = "default"
    lab_file: Optional[Path] = None
    python: Optional[str] = None
    no_gpu: bool = False
    require_gpu: bool = False
    jupyter: bool = False
    fresh: bool = False  # forget the request recorded by earlier runs
    dry_run: bool = False
    force: bool = False
    allow_cpu_fallback: bool = False
    allow_any_origin: bool = False
    adding: bool = False  # `gpuenv add`: packages into the recorded stack
    keep: tuple[str, ...] = ()  # framework pins `add` keeps (name==version)

    @property
    def command(self) -> str:
        return "add" if self.adding else "setup"


@dataclass(frozen=True)
class SetupOutcome:
    """What setup did: `unchanged` (a no-op), `dry-run` (planned, nothing changed) or
    `installed` (the environment was built, or found built from the same lockfile: then
    `changed` is False). `record` is what was recorded (for a dry run, what would be)."""

    status: Literal["unchanged", "dry-run", "installed"]
    run: SetupRun
    link: Path
    record: SetupRecord
    verified: bool
    backend: Optional[str] = None  # None when nothing was installed or checked
    changed: bool = False
    replaced: bool = False  # the environment replaced another that was there
    verdict: Optional[Report] = None  # verify's report, when it ran
    lockfile_exists: bool = False  # for a dry run: the lockfile is used, not written


def run_setup(run: SetupRun, reporter: Reporter) -> SetupOutcome:
    # only what the no-op check needs; the rest is imported once there is work to do
    from gpuenv.detect import detect_machine
    from gpuenv.envs.store import EnvLocation
    from gpuenv.envs.transaction import tidy_leftovers, up_to_date
    from gpuenv.index.config import user_index_config
    from gpuenv.recipes import load_knowledge_base

    kb = load_knowledge_base()
    location = EnvLocation.named(run.name)
    record = read_record(run.name)
    opts, request = _options(run, record, kb, reporter)
    machine = detect_machine()
    indexes = user_index_config()
    digest = inputs_hash(machine, opts, kb, indexes)
    if (
        record is not None
        and not run.force
        and not run.dry_run
        and record.inputs_hash == digest
        and record.verified
        and up_to_date(record.lockfile_sha256, location)
    ):
        tidy_leftovers(location)
        return SetupOutcome("unchanged", run, location.link, record, record.verified)
    return _build(run, opts, request, digest, machine, kb, indexes, location, reporter)


def _options(
    run: SetupRun, record: Optional[SetupRecord], kb: KnowledgeBase, reporter: Reporter
) -> tuple[SetupOptions, SetupRequest]:
    """The options of this run: the request merged with the record, the lab file found."""
    from gpuenv.lab.load import discover_lab
    from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS

    # an explicit --lab wins over what earlier runs recorded: the lab file is the stack
    explicit_lab = run.lab_file is not None
    request = merge_request(
        run.requirements,
        record,
        fresh=run.fresh or explicit_lab,
        jupyter=run.jupyter,
        adding=run.adding,
    )
    if explicit_lab and record is not None and record.frameworks:
        reporter.say(
            f"note: the lab file {run.lab_file} replaces the request recorded for {run.name}"
            f" ({', '.join((*record.frameworks, *record.packages))})"
        )
    lab, lab_note = discover_lab(Path.cwd(), run.lab_file, request.frameworks, kb)
    if lab_note:
        reporter.say(f"note: {lab_note}")
    if request.recorded_note:
        reporter.say(f"note: {request.recorded_note}")
    if run.keep:
        reporter.say(
            f"note: keeping the framework releases installed ({', '.join(run.keep)});"
            f" `gpuenv setup -n {run.name}` re-plans them"
        )
    # without a lab file the default stack is named, so a re-run hashes the same request
    frameworks = request.frameworks or (() if lab else DEFAULT_REQUIREMENTS)
    request = SetupRequest(frameworks, request.packages, request.jupyter, request.recorded_note)
    opts = _setup_options(run, run.keep or frameworks, lab, request)
    return opts, request


def _setup_options(
    run: SetupRun, requirements: tuple[str, ...], lab: Optional[Lab], request: SetupRequest
) -> SetupOptions:
    return SetupOptions(
        requirements,
        run.name,
        lab,
        run.python,
        run.no_gpu,
        run.require_gpu,
        run.dry_run,
        run.force,
        packages=request.packages,
        jupyter=request.jupyter,
        allow_cpu_fallback=run.allow_cpu_fallback,
    )


def _build(
    run: SetupRun,
    opts: SetupOptions,
    request: SetupRequest,
    digest: str,
    machine: Machine,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    location: EnvLocation,
    reporter: Reporter,
) -> SetupOutcome:
    """Plan, then (unless a dry run) lock, install, verify and record."""
    from gpuenv.envs.inventory import what_is_there
    from gpuenv.setup.build import lock_install_verify
    from gpuenv.setup.environment import activate_line, before_replacing, register_kernel
    from gpuenv.setup.planning import plan_setup
    from gpuenv.setup.record import write_record

    reporter.say(machine_line(machine))
    chosen = plan_setup(machine, opts, kb, indexes, reporter.say)
    stack = _say_plan(chosen, reporter)
    for line in before_replacing(location, stack, run.name):
        reporter.say(line)
    if run.dry_run:
        planned = _record(run, request, digest, chosen, stack, lockfile_sha256="", python="")
        planned = replace(planned, packages=opts.extra_packages())
        return SetupOutcome(
            "dry-run",
            run,
            location.link,
            planned,
            verified=False,
            lockfile_exists=chosen.lockfile_exists,
        )
    replaced = what_is_there(location)  # the notes above say what changes
    built = lock_install_verify(
        chosen,
        location,
        indexes,
        portable=opts.lab is not None,
        name=run.name,
        reporter=reporter,
        allow_any_origin=run.allow_any_origin,
    )
    link, backend = built.result.link, built.result.backend
    kernel = register_kernel(link, backend, run.name, stack) if opts.wants_kernel else None
    record = _record(
        run,
        request,
        digest,
        chosen,
        stack,
        lockfile_sha256=built.locked.content_sha256,
        python=built.locked.python,
        verified=built.verdict.ok,
        activate=activate_line(link, backend, run.name),
        kernel=str(kernel) if kernel else None,
        summary=built.locked.plan.summary(),
    )
    write_record(run.name, record)
    return SetupOutcome(
        "installed",
        run,
        link,
        record,
        built.verdict.ok,
        backend=backend,
        changed=built.result.changed,
        replaced=bool(replaced) and built.result.changed,
        verdict=built.verdict,
    )


def _say_plan(chosen: SetupPlan, reporter: Reporter) -> str:
    """The plan's notes, warnings and stack line, said; the stack line returned."""
    for note in chosen.notes:
        reporter.say(f"note: {note}")
    for warning in chosen.plan.warnings:
        reporter.say(f"warning: {warning}")
    plan = chosen.plan
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
    reporter.say(f"stack: {stack}; Python {plan.python}; {plan.accelerator}")
    return stack


def _record(
    run: SetupRun,
    request: SetupRequest,
    digest: str,
    chosen: SetupPlan,
    stack: str,
    *,
    lockfile_sha256: str,
    python: str,
    verified: bool = False,
    activate: str = "",
    kernel: Optional[str] = None,
    summary: Optional[dict[str, object]] = None,
) -> SetupRecord:
    return SetupRecord(
        inputs_hash=digest,
        lockfile=str(chosen.lockfile),
        lockfile_sha256=lockfile_sha256,
        stack=stack,
        python_version=python,
        verified=verified,
        verified_at=now(),
        activate=activate,
        lab_class=chosen.lab_class,
        # the request, so `gpuenv setup` with no arguments and `gpuenv add` rebuild the same
        frameworks=request.frameworks,
        packages=request.packages,
        jupyter=request.jupyter,
        python=run.python,
        no_gpu=run.no_gpu,
        require_gpu=run.require_gpu,
        allow_cpu_fallback=run.allow_cpu_fallback,
        kernel=kernel,
        # for --json, also when a later run is a no-op
        summary=dict(summary) if summary is not None else chosen.plan.summary(),
    )


def machine_line(machine: Machine) -> str:
    gpus = ", ".join(f"{g.name} ({g.compute_capability})" for g in machine.gpus) or "no NVIDIA GPU"
    driver = f"driver {machine.driver.version}" if machine.driver else "no NVIDIA driver"
    return f"machine: {machine.os.name or machine.os.family} {machine.platform}, {gpus}, {driver}"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
