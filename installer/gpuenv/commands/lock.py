"""`gpuenv lock`: resolve (or read a plan), then lock it for the target into a lockfile.

Long because the early-uv session (start uv while the index probe runs) and the lab loop (one
lock per class, --check's causes) still live here beside the option parsing: moving them to
gpuenv.lock.session, where setup and lab can share them, is the part of issue 17 not yet done."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from gpuenv.commands import json_output
from gpuenv.commands.assumed import assumed_field
from gpuenv.commands.lock_json import (
    absolute,
    check_json,
    failed_json,
    fallback,
    file_sha256,
    locked_json,
)
from gpuenv.commands.machine_options import plan_options
from gpuenv.index.redact import redact_text
from gpuenv.machine.describe import machine_from_options

if TYPE_CHECKING:
    from gpuenv.lock.pypi import PipCompile


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
def lock_command(
    ctx: click.Context,
    requirements: tuple[str, ...],
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
    gpu_index: Optional[int],
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    plan_file: Optional[Path],
    output: Optional[Path],
    portable: bool,
    local_paths: bool,
    channels: tuple[str, ...],
    exclude_newer: str,
    fmt: str,
    no_probe: bool,
    check: bool,
    lab_file: Optional[Path],
    class_names: tuple[str, ...],
    extra_indexes: tuple[str, ...],
    allow_cpu_fallback: bool,
) -> None:
    """Lock REQUIREMENTS (torch, 'tensorflow>=2.11', jax) for a machine into a reproducible lockfile."""
    from gpuenv.index.config import user_index_config, with_indexes
    from gpuenv.lock import LockOptions, check_lockfile, lock_plan, start_pip_lock
    from gpuenv.lock.conda import DEFAULT_CHANNELS
    from gpuenv.lock.fallback import policy_for
    from gpuenv.lock.names import PYLOCK, LockNameError, check_output, default_output
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.resolve import DEFAULT_REQUIREMENTS, resolve

    if lab_file is not None:
        _refuse_beside("--lab", _NOT_WITH_LAB, requirements, _LAB_DECIDES)
    elif plan_file is not None:
        _refuse_beside("--plan", _NOT_WITH_PLAN, requirements, _PLAN_DECIDES)
    if class_names and lab_file is None:
        raise click.UsageError("--class picks classes of a lab file: give --lab FILE with it")
    as_json = json_output.requested()
    kb = load_knowledge_base()
    indexes = with_indexes(user_index_config(), extra_indexes)
    if lab_file is not None:
        switches = _LabSwitches(allow_cpu_fallback, require_gpu, no_probe)
        raise SystemExit(_lock_lab(lab_file, class_names, check, kb, indexes, channels, switches))
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
    # a lockfile for another machine carries nothing of this one: index-relative entries, and
    # no path of this machine's folders unless --local-paths asks for them
    elsewhere = _for_another_machine(plan_file, machine_file, gpu, driver, os_name, arch)
    options = LockOptions(
        command=regenerate_command(ctx, output),
        output=output,
        channels=channels or DEFAULT_CHANNELS,
        portable=portable or (elsewhere and fmt != PYLOCK),
        exclude_newer=exclude_newer,
        indexes=indexes,
        format=fmt,
        local_paths=local_paths or not elsewhere,
    )
    notes: list[str] = list(indexes.notes)
    early: Optional[PipCompile] = None  # uv, started before the index probe
    fallen: list[str] = []  # the builds the sources did not give, and what replaced them
    assumed_json: dict[str, str] = {}  # what the plan assumed of a described machine
    try:
        if plan_file is not None:
            plan = _read_plan_file(plan_file)
            ideal = plan
        else:
            machine = machine_from_options(
                kb, machine_file=machine_file, gpu=gpu, driver=driver, os_name=os_name, arch=arch
            )
            resolve_args: dict[str, Any] = dict(
                python=python, no_gpu=no_gpu, require_gpu=require_gpu, gpu_index=gpu_index
            )
            reqs = requirements or DEFAULT_REQUIREMENTS
            ideal = plan = resolve(machine, reqs, kb=kb, **resolve_args)
            from gpuenv.commands import assumed
            from gpuenv.lock.targets import DEFAULT_GLIBC

            assumptions = assumed.assumed_by(
                kb,
                machine,
                ideal,
                by_flags=assumed.described(machine_file, gpu, driver, os_name, arch),
                driver=driver,
                python=python,
                glibc_floor=DEFAULT_GLIBC,
                os_name=os_name,
                arch=arch,
            )
            assumed.say(assumptions)
            assumed_json = assumed.as_json(assumptions)
            if not (check or no_probe):
                # uv starts on the plan resolved as if every source answered, then the index
                # probe runs beside it; lock_plan uses that run when the probe leaves the pip
                # part as it was
                early = start_pip_lock(ideal, options)
                from gpuenv.lock.availability import resolve_with_sources

                sourced = resolve_with_sources(
                    machine,
                    reqs,
                    kb,
                    indexes,
                    ideal=ideal,
                    fallback=policy_for(allow_cpu_fallback),
                    **resolve_args,
                )
                plan, ideal = sourced.plan, sourced.ideal
                notes += sourced.notes()
                fallen = list(sourced.fallback)
        if check:
            ok, message = check_lockfile(plan, options, policy_for(allow_cpu_fallback))
            if as_json:
                json_output.emit_result(
                    click.get_current_context(),
                    ok=ok,
                    exit_status=1,
                    check=True,
                    **check_json(ok, message, options.output, plan),
                )
            if not (as_json and ok):  # stdout holds only the JSON document
                click.echo(redact_text(message), err=not ok)
            raise SystemExit(0 if ok else 1)
        for note in notes:
            click.echo(redact_text(f"note: {note}"), err=True)
        for warning in plan.warnings:
            click.echo(redact_text(f"warning: {warning}"), err=True)
        for line in fallen:
            if not any(line in w for w in plan.warnings):
                click.echo(redact_text(f"warning: fallback: {line}"), err=True)
        before = file_sha256(options.output) if as_json else None
        result = lock_plan(plan, options, ideal, started=early)
    finally:
        if early is not None:  # not used (a failure, or the probe changed the plan): stopped
            early.cancel()
    for note in result.notes:
        if note not in notes:
            click.echo(redact_text(f"note: {note}"), err=True)
    if as_json:
        json_output.emit_result(
            click.get_current_context(),
            **locked_json(result, fmt, before),
            fallback=fallback(ideal, plan),
            notes=list(dict.fromkeys([*notes, *result.notes])),
            warnings=list(plan.warnings),
            **assumed_field(assumed_json),
        )
        return
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
    era = f", dependencies as of {result.exclude_newer}" if result.exclude_newer else ""
    click.echo(
        f"locked {stack} for {plan.platform}, Python {plan.python} ({plan.accelerator}): "
        f"{result.pip_count} pip and {result.conda_count} conda packages{era} -> {result.path}"
    )


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
    from gpuenv.machine.describe import host_platform

    return bool(_read_plan_file(plan_file).platform != host_platform())


# What --lab and --plan decide themselves: each of these given beside them would be ignored, so
# it is refused. (--portable is not: lab lockfiles are portable anyway.)
_PLAN_FLAGS = (
    "machine_file",
    "gpu",
    "driver",
    "os_name",
    "arch",
    "gpu_index",
    "python",
    "no_gpu",
    "require_gpu",
    "no_probe",
)
_NOT_WITH_PLAN = _PLAN_FLAGS
# --require-gpu, --no-probe and --allow-cpu-fallback apply to every class of a lab
_NOT_WITH_LAB = (
    *(f for f in _PLAN_FLAGS if f not in ("require_gpu", "no_probe")),
    "plan_file",
    "output",
    "exclude_newer",
    "fmt",
)
_LAB_DECIDES = (
    "the stack and the machines (the lab file's [stack] and [[class]] rows, always portable)"
)
_PLAN_DECIDES = "the stack and the machine (the saved Plan)"


def _refuse_beside(
    option: str, refused: tuple[str, ...], requirements: tuple[str, ...], decides: str
) -> None:
    ctx = click.get_current_context()
    given = [
        p.opts[-1] if p.opts else f"--{p.name}"
        for p in ctx.command.params
        if p.name in refused
        and ctx.get_parameter_source(p.name) not in (click.core.ParameterSource.DEFAULT, None)
    ]
    if requirements:
        given.insert(0, "REQUIREMENTS")
    if given:
        raise click.UsageError(
            f"{option} names {decides}: {', '.join(given)} cannot be given with it"
        )


def regenerate_command(ctx: click.Context, output: Path) -> str:
    """`gpuenv lock ...` as given (options at their defaults left out), for the file's header."""
    parts = ["gpuenv", "lock"]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if param.name in ("check", "output"):
            continue
        if isinstance(param, click.Argument):
            parts += [str(v) for v in value or ()]
            continue
        if not isinstance(param, click.Option) or value in (None, False, ()):
            continue
        if value == param.default and not param.multiple:
            continue
        flag = max(param.opts, key=len)
        if param.is_flag:
            parts.append(flag)
        elif param.multiple:
            for item in value:
                parts += [flag, str(item)]
        else:
            parts += [flag, str(value)]
    return shlex.join([*parts, "-o", str(output)])


@dataclass(frozen=True)
class _LabSwitches:
    """The command line's word on every class of a lab."""

    allow_cpu_fallback: bool = False  # widen each class's `fallback` to "cpu"
    require_gpu: bool = False  # a GPU class that cannot get the GPU fails (exit 3)
    no_probe: bool = False  # lock each class's plan as resolved, without asking the indexes


def _lock_lab(
    lab_file: Path,
    class_names: tuple[str, ...],
    check: bool,
    kb: Any,
    indexes: Any,
    channels: tuple[str, ...],
    switches: _LabSwitches = _LabSwitches(),
) -> int:
    """Every class's lockfile (portable); with --check, which are stale. The exit status."""
    from gpuenv.errors import exit_code
    from gpuenv.lab.load import (
        ClassPlan,
        class_policy,
        class_requires_gpu,
        lab_class_plan,
        load_lab,
        with_packages,
    )
    from gpuenv.lock import LockOptions, check_lockfile, lock_plan
    from gpuenv.lock.conda import DEFAULT_CHANNELS
    from gpuenv.resolve import resolve

    lab = load_lab(lab_file, kb)
    names = dict.fromkeys(class_names)  # each class once, in the order given
    classes = [lab.find_class(n) for n in names] if names else list(lab.classes)
    failed = 0
    statuses: set[int] = set()  # the exit status of each failure
    as_json, rows = json_output.requested(), []  # rows: each class's outcome, for --json
    for cls in classes:
        options = LockOptions(
            command=shlex.join(["gpuenv", "lock", "--lab", str(lab_file), "--class", cls.name]),
            output=lab.lockfile(cls),
            channels=channels or DEFAULT_CHANNELS,
            portable=True,
            indexes=indexes,
            machine_class=cls.name,
        )
        try:
            policy = class_policy(cls, switches.allow_cpu_fallback)
            require = class_requires_gpu(cls, switches.require_gpu)
            if check or switches.no_probe:
                plan = resolve(
                    cls.machine(), lab.requirements, kb=kb, python=lab.python, require_gpu=require
                )
                plan = with_packages(plan, lab.packages)
            if check:
                ok, message = check_lockfile(plan, options, policy)
                missing = not options.output.exists()
                label = "ok     " if ok else ("MISSING" if missing else "STALE  ")
                if as_json:
                    state = "up_to_date" if ok else ("missing" if missing else "stale")
                    rows.append(
                        {
                            "class": cls.name,
                            "status": state,
                            **check_json(ok, message, options.output, plan),
                        }
                    )
                else:
                    click.echo(redact_text(f"{label} {cls.name}: {message}"))
                if not ok:
                    failed += 1
                    statuses.add(1)
                continue
            if switches.no_probe:
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
            plan, ideal = chosen.plan, chosen.ideal
            for line in chosen.fallback:
                click.echo(redact_text(f"warning: {cls.name}: fallback: {line}"), err=True)
            before = file_sha256(options.output) if as_json else None
            result = lock_plan(plan, options, ideal)
            for note in result.notes:
                click.echo(redact_text(f"note: {cls.name}: {note}"), err=True)
        except Exception as exc:
            if exit_code(exc) is None:
                raise
            click.echo(redact_text(f"FAILED {cls.name}: {exc}"), err=True)
            failed += 1
            statuses.add(exit_code(exc) or 1)
            rows.append(failed_json(cls.name, options.output, exc, exit_code(exc) or 1))
            continue
        if as_json:
            rows.append(
                {
                    "class": cls.name,
                    "status": "locked",
                    **locked_json(result, "conda-lock", before),
                    "fallback": fallback(ideal, plan),
                    "notes": list(result.notes),
                    "warnings": list(plan.warnings),
                }
            )
            continue
        stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
        click.echo(f"locked {cls.name}: {stack}, Python {plan.python} -> {result.path}")
    if as_json:  # the exit status is the one returned below
        status = (next(iter(statuses)) if len(statuses) == 1 else 1) if failed else 0
        json_output.emit_result(
            click.get_current_context(),
            ok=not failed,
            exit_status=status,
            lab=absolute(lab_file),
            check=check,
            failed=failed,
            classes=rows,
        )
    if failed:
        click.echo(
            f"{failed} of {len(classes)} classes {'stale or missing' if check else 'failed'}",
            err=True,
        )
    if not failed:
        return 0
    # one cause for every failure (all unreachable: 5) keeps its status; a mix is a failed lock
    return statuses.pop() if len(statuses) == 1 else 1


MAX_PLAN_BYTES = 4 << 20


def _read_plan_file(path: Path) -> Any:
    """A Plan from `gpuenv resolve --json` (a file from elsewhere: checked like a lockfile's)."""
    from gpuenv.fs import strict_json
    from gpuenv.fs.safe_paths import read_bounded
    from gpuenv.lock.plan_fields import check_plan
    from gpuenv.resolve.plan import Plan

    raw = read_bounded(path, MAX_PLAN_BYTES, "plan file")
    try:  # NaN, 5000-digit numbers and deep nesting are refused, never a traceback
        data = strict_json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise click.UsageError(f"--plan {path}: not a JSON plan ({exc})") from exc
    if isinstance(data, dict):
        data.pop("rejected", None)  # resolve's explanation of other builds: not part of the stack
    problem = check_plan(data)
    if problem:
        raise click.UsageError(f"--plan {path}: {problem}")
    return Plan.from_json(data)
