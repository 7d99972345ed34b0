"""`gpuenv lock`: resolve (or read a plan), then lock it for the target into a lockfile; with
`--lab`, every machine class of a lab (commands/lock_lab.py renders that). The work is
gpuenv.lock's (the probe beside an early uv run: lock/session.py); this module parses and
renders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from gpuenv.commands import json_output
from gpuenv.commands.assumed import assumed_field
from gpuenv.commands.lock_flags import refuse_conflicts, regenerate_command
from gpuenv.commands.lock_json import check_json, fallback, locked_json
from gpuenv.commands.machine_options import plan_options
from gpuenv.fs.file_hash import file_sha256
from gpuenv.machine.describe import machine_from_options
from gpuenv.output.redact import redact_text
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock import LockOptions, LockResult
    from gpuenv.lock.pypi import PipCompile
    from gpuenv.lock.session import SourcedLock
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.resolve.plan import Plan


@click.command("lock")
# not passed as an argument: read with json_output.requested(), so the lock's own options and
# the command recorded in the lockfile's header stay what they are with or without --json
@json_output.json_option(
    "Print what was locked (or, with --check, whether it is up to date) as JSON.", expose=False
)
@plan_options
@click.option(
    "--plan",
    "plan_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Lock this Plan (`gpuenv resolve --json`) instead of resolving.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The lockfile to write [default: gpuenv.conda-lock.yml; pylock.toml with --format pylock].",
)
@click.option(
    "--portable",
    is_flag=True,
    help="Record default-index files by project, name and hash, not by host URL"
    " (conda-lock format only).",
)
@click.option(
    "--local-paths",
    is_flag=True,
    help="In a lockfile for another machine (--os/--gpu/--driver/--machine, or a plan for"
    " another platform), allow wheels only this machine's folders have (find-links, file://"
    " indexes), by their paths; without it they are an error.",
)
@click.option(
    "--channel", "channels", multiple=True, help="conda channel (repeatable; default conda-forge)."
)
@click.option(
    "--exclude-newer",
    default="auto",
    show_default=True,
    help="Resolve dependencies as of a date: auto (the plan's era for old stacks), none, or YYYY-MM-DD.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["conda-lock", "pylock"]),
    default="conda-lock",
    show_default=True,
    help="conda-lock v1 file (*.conda-lock.yml), or PEP 751 pylock.toml (pip-only plans;"
    " uv and pip install it too).",
)
@click.option(
    "--no-probe",
    is_flag=True,
    help="Do not ask the indexes what they publish before resolving (lock fails if a file is missing).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 if the lockfile does not match these inputs; write nothing.",
)
@click.option(
    "--lab",
    "lab_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Lock every machine class of this lab file into its lockfiles folder (portable).",
)
@click.option("--class", "class_names", multiple=True, help="With --lab: only these classes.")
@click.option(
    "--index",
    "extra_indexes",
    multiple=True,
    metavar="URL",
    help="Also look for packages on this index (repeatable), after the ones your pip or uv"
    " settings name: a mirror of an index that cannot be reached from here.",
)
@click.option(
    "--allow-cpu-fallback",
    is_flag=True,
    help="When the planned GPU build cannot be locked (its index unreachable, a wheel missing),"
    " lock the CPU build instead of failing (exit 5). Fallbacks that keep the GPU are always"
    " allowed (with --lab: as each class's `fallback` says).",
)
@click.pass_context
def lock_command(ctx: click.Context, /, **params: Any) -> None:
    """Lock REQUIREMENTS (torch, 'tensorflow>=2.11', jax) for a machine into a reproducible lockfile."""
    from gpuenv.index.config import user_index_config, with_indexes
    from gpuenv.lock import last_request
    from gpuenv.lock.fallback import policy_for
    from gpuenv.recipes import load_knowledge_base

    args = _Args(**params)
    refuse_conflicts(args.requirements, args.lab_file, args.plan_file, args.class_names)
    kb = load_knowledge_base()
    indexes = with_indexes(user_index_config(), args.extra_indexes)
    if args.lab_file is not None:
        from gpuenv.commands.lock_lab import lock_lab
        from gpuenv.lab.lock_classes import LabSwitches

        switches = LabSwitches(args.allow_cpu_fallback, args.require_gpu, args.no_probe)
        status = lock_lab(
            args.lab_file, args.class_names, args.check, kb, indexes, args.channels, switches
        )
        raise SystemExit(status)
    output = _checked_output(args.output, args.fmt, args.portable)
    options = _lock_options(ctx, args, output, indexes)
    policy = policy_for(args.allow_cpu_fallback)
    key, guessed = last_request.claim()  # uv on last time's request, started by the program
    try:
        sourced, assumed_json = _planned(kb, indexes, options, args, policy, guessed)
    except BaseException:
        if guessed is not None:
            guessed.cancel()
        raise
    if guessed is not None and sourced.early is not guessed:
        guessed.cancel()  # not this lock's request (or --check, which runs no uv)
    if key is not None:
        last_request.remember(key, sourced.early, guessed)
    notes = [*indexes.notes, *sourced.notes]
    try:  # uv's early run never outlives the command
        if args.check:
            _check(sourced.plan, options, policy)
        _say_before_locking(sourced, notes)
        before = file_sha256(options.output)
        result = sourced.lock(options)
    finally:
        sourced.cancel()
    _render(result, sourced, args.fmt, before, notes, assumed_json)


@dataclass(frozen=True)
class _Args:
    """lock's command line, as click parsed it."""

    requirements: tuple[str, ...]
    machine_file: Optional[Path]
    gpu: Optional[str]
    driver: Optional[str]
    os_name: Optional[str]
    arch: Optional[str]
    gpu_index: Optional[int]
    python: Optional[str]
    no_gpu: bool
    require_gpu: bool
    plan_file: Optional[Path]
    output: Optional[Path]
    portable: bool
    local_paths: bool
    channels: tuple[str, ...]
    exclude_newer: str
    fmt: str
    no_probe: bool
    check: bool
    lab_file: Optional[Path]
    class_names: tuple[str, ...]
    extra_indexes: tuple[str, ...]
    allow_cpu_fallback: bool

    @property
    def described(self) -> Described:
        return (self.machine_file, self.gpu, self.driver, self.os_name, self.arch)

    def resolve_args(self) -> dict[str, Any]:
        return dict(
            python=self.python,
            no_gpu=self.no_gpu,
            require_gpu=self.require_gpu,
            gpu_index=self.gpu_index,
        )


def _render(
    result: LockResult,
    sourced: SourcedLock,
    fmt: str,
    before: Optional[str],
    notes: list[str],
    assumed_json: dict[str, str],
) -> None:
    for note in result.notes:
        if note not in notes:
            echo(redact_text(f"note: {note}"), err=True)
    plan = sourced.plan
    if json_output.requested():
        json_output.emit_result(
            click.get_current_context(),
            **locked_json(result, fmt, before),
            fallback=fallback(sourced.ideal, plan),
            notes=list(dict.fromkeys([*notes, *result.notes])),
            warnings=list(plan.warnings),
            **assumed_field(assumed_json),
        )
        return
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
    era = f", dependencies as of {result.exclude_newer}" if result.exclude_newer else ""
    echo(
        f"locked {stack} for {plan.platform}, Python {plan.python} ({plan.accelerator}): "
        f"{result.pip_count} pip and {result.conda_count} conda packages{era} -> {result.path}"
    )


Described = tuple[Optional[Path], Optional[str], Optional[str], Optional[str], Optional[str]]


def _checked_output(output: Optional[Path], fmt: str, portable: bool) -> Path:
    from gpuenv.lock.names import PYLOCK, LockNameError, check_output, default_output

    output = output or default_output(fmt)
    try:
        check_output(fmt, output)
    except LockNameError as exc:
        raise click.UsageError(str(exc)) from None
    if fmt == PYLOCK and portable:
        raise click.UsageError(
            "--portable is for conda-lock files: PEP 751 names every wheel by its URL, which uv"
            " and pip need. Drop --portable, or use --format conda-lock."
        )
    return output


def _lock_options(
    ctx: click.Context, args: _Args, output: Path, indexes: IndexConfig
) -> LockOptions:
    from gpuenv.lock import LockOptions
    from gpuenv.lock.conda import DEFAULT_CHANNELS
    from gpuenv.lock.names import PYLOCK

    # a lockfile for another machine carries nothing of this one: index-relative entries, and
    # no path of this machine's folders unless --local-paths asks for them
    elsewhere = _for_another_machine(args.plan_file, *args.described)
    return LockOptions(
        command=regenerate_command(ctx, output),
        output=output,
        channels=args.channels or DEFAULT_CHANNELS,
        portable=args.portable or (elsewhere and args.fmt != PYLOCK),
        exclude_newer=args.exclude_newer,
        indexes=indexes,
        format=args.fmt,
        local_paths=args.local_paths or not elsewhere,
    )


def _saved_plan(path: Path, options: LockOptions, guessed: Optional[PipCompile]) -> SourcedLock:
    """--plan: the saved plan, uv started on it (or on the guess, when it is its request)."""
    from gpuenv.lock import start_pip_lock
    from gpuenv.lock.plan_file import read_plan_file
    from gpuenv.lock.session import SourcedLock

    plan = read_plan_file(path)
    return SourcedLock(plan, plan, early=start_pip_lock(plan, options, guessed))


def _planned(
    kb: KnowledgeBase,
    indexes: IndexConfig,
    options: LockOptions,
    args: _Args,
    policy: str,
    guessed: Optional[PipCompile] = None,
) -> tuple[SourcedLock, dict[str, str]]:
    """The plan to lock (a saved one, or resolved, its assumptions said), and what the plan
    assumed of a described machine (for --json). Unless --check or --no-probe, the indexes are
    asked what they publish while uv starts on the plan resolved as if all of them answered.
    `guessed`: uv's run on this command line's last request, kept if it is this plan's."""
    from gpuenv.commands import assumed
    from gpuenv.lock import start_pip_lock
    from gpuenv.lock.session import SourcedLock, probe_beside_uv
    from gpuenv.lock.targets import DEFAULT_GLIBC
    from gpuenv.resolve import DEFAULT_REQUIREMENTS, resolve

    if args.plan_file is not None:
        return _saved_plan(args.plan_file, options, guessed), {}
    machine_file, gpu, driver, os_name, arch = args.described
    machine = machine_from_options(
        kb, machine_file=machine_file, gpu=gpu, driver=driver, os_name=os_name, arch=arch
    )
    reqs = args.requirements or DEFAULT_REQUIREMENTS
    # the ideal plan is compared, never explained: its search stops where it finds the stack
    ideal = resolve(machine, reqs, kb=kb, every_rejection=False, **args.resolve_args())
    assumptions = assumed.assumed_by(
        kb,
        machine,
        ideal,
        by_flags=assumed.described(*args.described),
        driver=driver,
        python=args.python,
        glibc_floor=DEFAULT_GLIBC,
        os_name=os_name,
        arch=arch,
    )
    assumed.say(assumptions)
    if args.check:
        return SourcedLock(ideal, ideal), assumed.as_json(assumptions)
    if args.no_probe:
        sourced = SourcedLock(ideal, ideal, early=start_pip_lock(ideal, options, guessed))
    else:
        sourced = probe_beside_uv(
            machine,
            reqs,
            ideal,
            kb,
            indexes,
            options,
            fallback=policy,
            guessed=guessed,
            **args.resolve_args(),
        )
    return sourced, assumed.as_json(assumptions)


def _check(plan: Plan, options: LockOptions, policy: str) -> None:
    """--check: whether the lockfile matches these inputs; exits 0 or 1, writes nothing."""
    from gpuenv.lock import check_lockfile

    ok, message = check_lockfile(plan, options, policy)
    as_json = json_output.requested()
    if as_json:
        json_output.emit_result(
            click.get_current_context(),
            ok=ok,
            exit_status=1,
            check=True,
            **check_json(ok, message, options.output, plan),
        )
    if not (as_json and ok):  # stdout holds only the JSON document
        echo(redact_text(message), err=not ok)
    raise SystemExit(0 if ok else 1)


def _say_before_locking(sourced: SourcedLock, notes: list[str]) -> None:
    for note in notes:
        echo(redact_text(f"note: {note}"), err=True)
    for warning in sourced.plan.warnings:
        echo(redact_text(f"warning: {warning}"), err=True)
    for line in sourced.fallback:
        if not any(line in w for w in sourced.plan.warnings):
            echo(redact_text(f"warning: fallback: {line}"), err=True)


def _for_another_machine(
    plan_file: Optional[Path],
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
) -> bool:
    """Whether the lock is for a machine other than this one: described by flags or a machine
    file, or a saved plan for another platform."""
    from gpuenv.commands.assumed import described

    if machine_file is not None or described(None, gpu, driver, os_name, arch):
        return True
    if plan_file is None:
        return False
    from gpuenv.lock.plan_file import read_plan_file
    from gpuenv.machine.describe import host_platform

    return bool(read_plan_file(plan_file).platform != host_platform())
