"""`gpuenv setup`: one command from a bare machine to a verified GPU (or CPU) environment, and
`gpuenv add`: extra packages into an environment setup made, kept across rebuilds.

Long because setup's workflow (plan, lock, install, verify, record) still lives here beside
its options: moving it to a typed, click-free gpuenv.setup package is the part of issue 17 not
yet done."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import click

from gpuenv.commands.json_output import json_option
from gpuenv.commands.machine_options import check_python_option
from gpuenv.commands.progress import Reporter


@dataclass(frozen=True)
class _Request:
    """What the user asked setup for, after the recorded request of an earlier run is merged in."""

    frameworks: tuple[str, ...]
    packages: tuple[str, ...]
    jupyter: bool
    recorded_note: Optional[str]


@click.command("setup")
@click.argument("requirements", nargs=-1)
@click.option(
    "--lab",
    "lab_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The lab file (default: ./gpuenv.toml or ./lab.toml, when no REQUIREMENTS are given).",
)
@click.option("-n", "--name", default="default", show_default=True, help="The environment's name.")
@click.option("--python", callback=check_python_option, help="Pin the Python version (3.10).")
@click.option("--no-gpu", is_flag=True, help="Set up a CPU stack even if a GPU is present.")
@click.option("--require-gpu", is_flag=True, help="Fail unless every framework gets the GPU.")
@click.option("--jupyter", is_flag=True, help="Install ipykernel and register a Jupyter kernel.")
@click.option(
    "--allow-cpu-fallback",
    is_flag=True,
    help="When the planned GPU build cannot be locked (its index unreachable, a wheel missing),"
    " set up the CPU build instead of failing (exit 5).",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Forget the packages and options recorded for this environment by earlier runs.",
)
@click.option(
    "--split",
    is_flag=True,
    help="One environment per framework, named after it (torch, tensorflow, jax), each with"
    " the extra packages, its own kernel and `gpuenv run -n NAME`: for frameworks whose CUDA"
    " libraries cannot share one environment.",
)
@click.option(
    "--allow-any-origin",
    is_flag=True,
    help="Install a lockfile's files from wherever it says (a lab's lockfile), not only from"
    " your configured indexes and the framework indexes gpuenv knows.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be installed; change nothing.")
@click.option("--force", is_flag=True, help="Redo every step even if nothing changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@json_option()
def setup_command(
    requirements: tuple[str, ...],
    lab_file: Optional[Path],
    name: str,
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    jupyter: bool,
    allow_cpu_fallback: bool,
    fresh: bool,
    split: bool,
    allow_any_origin: bool,
    dry_run: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Detect this machine, pick and lock its stack, install it, verify it on the GPU.

    REQUIREMENTS like torch, 'tensorflow>=2.11', jax, and any other packages to lock beside them
    (jupyterlab, 'pandas>=2'); with none, what the last run of this environment used, the lab
    file's stack, or PyTorch. Extra packages are recorded and kept when the environment is rebuilt.
    Safe to re-run: with nothing changed it is a quick no-op.
    """
    for group, env_name in _environments(requirements, name, split, lab_file, as_json):
        run_setup(
            group,
            lab_file=lab_file,
            name=env_name,
            python=python,
            no_gpu=no_gpu,
            require_gpu=require_gpu,
            jupyter=jupyter,
            fresh=fresh,
            dry_run=dry_run,
            force=force,
            quiet=quiet,
            as_json=as_json,
            allow_cpu_fallback=allow_cpu_fallback,
            allow_any_origin=allow_any_origin,
        )


def _environments(
    requirements: tuple[str, ...],
    name: str,
    split: bool,
    lab_file: Optional[Path],
    as_json: bool,
) -> list[tuple[tuple[str, ...], str]]:
    """(requirements, environment name) of each environment to set up: one, or with --split
    one per framework, named after it, each with the extra packages."""
    if not split:
        return [(requirements, name)]
    from gpuenv.resolve.packages import split_requirements
    from gpuenv.resolve.requirements import parse_requirements

    if lab_file is not None or as_json or name != "default":
        raise click.UsageError(
            "--split makes one environment per framework, named after it:"
            " it goes without --lab, --name and --json"
        )
    frameworks, packages = split_requirements(requirements)
    groups: dict[str, list[str]] = {}
    for text in frameworks:
        (req,) = parse_requirements([text])
        groups.setdefault(req.framework, []).append(text)
    if len(groups) < 2:
        raise click.UsageError("--split needs two or more frameworks (torch tensorflow ...)")
    return [((*texts, *packages), framework) for framework, texts in groups.items()]


@click.command("add")
@click.argument("packages", nargs=-1, required=True)
@click.option("-n", "--name", default="default", show_default=True, help="The environment's name.")
@click.option("--dry-run", is_flag=True, help="Show what would be installed; change nothing.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@json_option()
def add_command(
    packages: tuple[str, ...], name: str, dry_run: bool, quiet: bool, as_json: bool
) -> None:
    """Add PACKAGES to an environment `gpuenv setup` made: lock them with its stack and rebuild it.

    They are recorded with the environment, so they are still there after the next rebuild (a new
    driver, a newer knowledge base). `pip install` inside the environment is not: a rebuild drops
    what the lockfile does not hold.
    """
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.setup import read_state

    state = read_state(name)
    if not state.get("frameworks"):
        raise EnvironmentNotFound(
            f"no environment {name!r} made by `gpuenv setup` (or it predates recorded requests):"
            f" run `gpuenv setup -n {name} FRAMEWORK {' '.join(packages)}` instead"
        )
    run_setup(
        packages,
        lab_file=None,
        name=name,
        python=state.get("python"),
        no_gpu=bool(state.get("no_gpu")),
        require_gpu=bool(state.get("require_gpu")),
        allow_cpu_fallback=state.get("allow_cpu_fallback") is True,
        jupyter=False,
        fresh=False,
        dry_run=dry_run,
        force=False,
        quiet=quiet,
        as_json=as_json,
        adding=True,
        keep=_installed_builds(name),
    )


def _installed_builds(name: str) -> tuple[str, ...]:
    """`add` keeps the framework releases the environment has (`gpuenv setup` re-plans them):
    each as `name==version`, from the environment's own metadata (checked like input)."""
    from gpuenv.envs.errors import InstallError
    from gpuenv.envs.store import EnvLocation, read_metadata
    from gpuenv.resolve.requirements import RequirementError, parse_requirements

    current = EnvLocation.named(name).current()
    if current is None:
        return ()
    try:
        plan = read_metadata(current).get("plan") or {}
        pins = tuple(
            f"{fw}=={choice['version']}" for fw, choice in (plan.get("frameworks") or {}).items()
        )
        parse_requirements(list(pins))  # a damaged record is ignored, not trusted
    except (InstallError, RequirementError, AttributeError, KeyError, TypeError):
        return ()
    return pins


def run_setup(
    requirements: tuple[str, ...],
    *,
    lab_file: Optional[Path],
    name: str,
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    jupyter: bool,
    fresh: bool,
    dry_run: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
    adding: bool = False,
    allow_cpu_fallback: bool = False,
    keep: tuple[str, ...] = (),
    allow_any_origin: bool = False,
) -> None:
    # only what the no-op check needs; the rest is imported once there is work to do
    from gpuenv.detect import detect_machine
    from gpuenv.envs.store import EnvLocation
    from gpuenv.envs.transaction import tidy_leftovers, up_to_date
    from gpuenv.index.config import user_index_config
    from gpuenv.lab.load import discover_lab
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS
    from gpuenv.setup import SetupOptions, inputs_hash, read_state

    report = Reporter(quiet=quiet or as_json)
    command = "add" if adding else "setup"
    kb = load_knowledge_base()
    location = EnvLocation.named(name)
    state = read_state(name)
    # an explicit --lab wins over what earlier runs recorded: the lab file is the stack
    request = _request(
        requirements, state, fresh=fresh or lab_file is not None, jupyter=jupyter, adding=adding
    )
    if lab_file is not None and _recorded(state, "frameworks"):
        report.say(
            f"note: the lab file {lab_file} replaces the request recorded for {name}"
            f" ({', '.join((*_recorded(state, 'frameworks'), *_recorded(state, 'packages')))})"
        )
    lab, lab_note = discover_lab(Path.cwd(), lab_file, request.frameworks, kb)
    if lab_note:
        report.say(f"note: {lab_note}")
    if request.recorded_note:
        report.say(f"note: {request.recorded_note}")
    # without a lab file the default stack is named, so a re-run hashes the same request
    frameworks = request.frameworks or (() if lab else DEFAULT_REQUIREMENTS)
    if keep:
        report.say(
            f"note: keeping the framework releases installed ({', '.join(keep)});"
            f" `gpuenv setup -n {name}` re-plans them"
        )
    opts = SetupOptions(
        keep or frameworks,
        name,
        lab,
        python,
        no_gpu,
        require_gpu,
        dry_run,
        force,
        packages=request.packages,
        jupyter=request.jupyter,
        allow_cpu_fallback=allow_cpu_fallback,
    )
    machine = detect_machine()
    indexes = user_index_config()
    digest = inputs_hash(machine, opts, kb, indexes)
    if (
        not force
        and not dry_run
        and state.get("inputs_hash") == digest
        and state.get("verified")
        and up_to_date(state.get("lockfile_sha256", ""), location)
    ):
        tidy_leftovers(location)
        _finish(as_json, "unchanged", name, state, location.link, command=command)
        return

    from gpuenv.commands.json_output import plan_summary
    from gpuenv.setup import now, plan_setup, write_state

    report.say(_machine_line(machine))
    chosen = plan_setup(machine, opts, kb, indexes, report.say)
    for note in chosen.notes:
        report.say(f"note: {note}")
    for warning in chosen.plan.warnings:
        report.say(f"warning: {warning}")
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in chosen.plan.frameworks.items())
    report.say(f"stack: {stack}; Python {chosen.plan.python}; {chosen.plan.accelerator}")
    for line in _before_replacing(location, stack, name):
        report.say(line)
    if dry_run:
        action = "use" if chosen.lockfile_exists else "write"
        if as_json:
            _emit(
                status="dry-run",
                name=name,
                environment=str(location.link),
                stack=stack,
                lockfile=str(chosen.lockfile),
                packages=list(opts.extra_packages()),
                **plan_summary(chosen.plan),
            )
        else:
            click.echo(
                f"dry run: would {action} {chosen.lockfile}, install it as {location.link},"
                " verify it"
            )
        return

    from gpuenv.envs.inventory import what_is_there

    replaced = what_is_there(location)  # setup's notes (_before_replacing) say what changes
    locked, result, verdict = _lock_install_verify(
        chosen, location, indexes, lab is not None, report, name, allow_any_origin
    )
    if not quiet and not as_json:
        click.echo(verdict.render(), err=True)
    kernel = (
        _register_kernel(result.link, result.backend, name, stack) if opts.wants_kernel else None
    )
    activate = _activate_hint(result.link, result.backend, name)
    record = {
        "inputs_hash": digest,
        "lockfile": str(chosen.lockfile),
        "lockfile_sha256": locked.content_sha256,
        "stack": stack,
        "python_version": locked.python,
        "verified": verdict.ok,
        "verified_at": now(),
        "activate": activate,
        "lab_class": chosen.lab_class,
        # the request, so `gpuenv setup` with no arguments and `gpuenv add` rebuild the same
        "frameworks": list(frameworks),
        "packages": list(request.packages),
        "jupyter": request.jupyter,
        "python": python,
        "no_gpu": no_gpu,
        "require_gpu": require_gpu,
        "allow_cpu_fallback": allow_cpu_fallback,
        "kernel": str(kernel) if kernel else None,
        "summary": plan_summary(locked.plan),  # for --json, also when a later run is a no-op
    }
    write_state(name, record)
    status = "installed" if result.changed else "unchanged"
    _finish(
        as_json,
        status,
        name,
        record,
        result.link,
        verified=verdict.ok,
        backend=result.backend,
        replaced=bool(replaced) and result.changed,
        command=command,
    )
    if not verdict.ok:
        raise SystemExit(1)


def _lock_install_verify(
    chosen: Any,
    location: Any,
    indexes: Any,
    portable: bool,
    report: Reporter,
    name: str,
    allow_any_origin: bool = False,
) -> tuple[Any, Any, Any]:
    """Lock the plan (unless its lockfile exists), install it, verify it: (locked, result,
    verdict). verify runs once, as the check before the swap."""
    from gpuenv.commands.env_options import checked_origins
    from gpuenv.envs.python_check import PythonLookup, check_python_available
    from gpuenv.uv.binary import find_uv

    uv = find_uv()
    # uv looks for the plan's Python while gpuenv imports, locks and reads the lockfile (the
    # lockfile's Python is the plan's; conda packages bring their own)
    lookup = PythonLookup(uv, None if chosen.plan.conda else chosen.plan.python)
    pending = None
    try:
        from gpuenv.cache import cache_dir
        from gpuenv.envs.artifacts import artifacts_of, gather
        from gpuenv.envs.store import interpreter
        from gpuenv.envs.transaction import install
        from gpuenv.lock import lock_plan
        from gpuenv.lock.load import load_locked
        from gpuenv.setup import discard_pending, pending_lockfile, promote_lockfile
        from gpuenv.verify import Expectations, Report, import_failures, verify_environment

        # A new lockfile is written aside and becomes the recorded one only once its environment
        # is live: an interrupted setup leaves the old environment with its own lockfile.
        pending = None if chosen.lockfile_exists else pending_lockfile(chosen.lockfile)
        if pending is not None:
            report.say(f"locking -> {chosen.lockfile}")
            lock_plan(chosen.plan, _setup_lock_options(chosen, pending, portable, indexes, name))
        if pending is None and chosen.locked is not None:
            locked = chosen.locked  # the lab's lockfile, read once already for the plan
        else:
            locked = replace(load_locked(pending or chosen.lockfile), path=chosen.lockfile)
        # fail fast: before anything is downloaded. A lockfile read from disk (a lab's, or one
        # an earlier setup wrote) is untrusted: its files come only from where the user said.
        # One this run has just locked is uv's answer from the user's own indexes (its local
        # files checked by the lock): nothing to ask the indexes again.
        if pending is None:
            checked_origins(locked, indexes, allow_any_origin=allow_any_origin)
        base_python = check_python_available(locked, uv=uv, lookup=lookup)
        files = gather(
            artifacts_of(locked), cache=cache_dir(), indexes=indexes, progress=report.progress
        )
        report.done_downloading()
        expected = Expectations.from_plan(locked.plan)
        verdicts: list[Report] = []

        def verify_before_swap(python: Path) -> Optional[str]:
            """verify is the smoke test: one import of each framework, before the swap."""
            report.say("verifying inside the new environment")
            verdicts.append(verify_environment(python, expected))
            return import_failures(verdicts[-1])

        result = install(
            locked,
            location,
            files,
            uv=uv,
            say=report.say,
            check=verify_before_swap,
            base_python=base_python,
        )
        if pending is not None:
            promote_lockfile(pending, chosen.lockfile)
    finally:
        lookup.cancel()  # answered already, unless setup stopped first
        if pending is not None:
            discard_pending(pending)
    if not verdicts:  # the environment was there already (built from this very lockfile)
        report.say("verifying inside the environment")
        verdicts.append(verify_environment(interpreter(result.env_dir), expected))
    verdict = verdicts[-1]
    return locked, result, verdict


def _setup_lock_options(chosen: Any, pending: Path, portable: bool, indexes: Any, name: str) -> Any:
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


def _request(
    requirements: tuple[str, ...],
    state: dict[str, Any],
    *,
    fresh: bool,
    jupyter: bool,
    adding: bool,
) -> _Request:
    """Frameworks and extra packages for this run: the command line's, with what earlier runs of
    the same environment recorded (unless --fresh), so a rebuild keeps added packages."""
    from gpuenv.resolve.packages import merge_packages, split_requirements

    frameworks, packages = split_requirements(requirements)
    recorded_frameworks = () if fresh else _recorded(state, "frameworks")
    recorded_packages = () if fresh else _recorded(state, "packages")
    recorded_jupyter = state.get("jupyter") is True and not fresh
    note = None
    if not frameworks and (adding or not packages) and recorded_frameworks:
        frameworks = recorded_frameworks
        note = f"using the frameworks recorded for this environment: {', '.join(frameworks)}"
    if packages and not frameworks:
        raise click.UsageError(
            f"{', '.join(packages)}: name a framework to set up beside them (torch, tensorflow,"
            " jax), or use `gpuenv add` for an environment setup made"
        )
    if recorded_packages:
        kept = [p for p in recorded_packages if p not in packages]
        if kept:
            extra = f"keeping the packages added earlier: {', '.join(kept)} (--fresh drops them)"
            note = f"{note}; {extra}" if note else extra
    return _Request(
        frameworks, merge_packages(recorded_packages, packages), jupyter or recorded_jupyter, note
    )


def _recorded(state: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list of requirements an earlier run recorded (metadata on disk: checked like input; a
    damaged record is ignored rather than trusted)."""
    from gpuenv.resolve.packages import check_package
    from gpuenv.resolve.requirements import RequirementError

    value = state.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ()
    try:
        return tuple(check_package(v) for v in value)
    except RequirementError:
        return ()


def _before_replacing(location: Any, stack: str, name: str) -> list[str]:
    """What a rebuild would change or lose in the environment it replaces."""
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.envs.hand_installed import hand_installed
    from gpuenv.envs.store import read_metadata

    current = location.current()
    if current is None:
        return []
    try:
        meta = read_metadata(current)
    except EnvironmentNotFound:
        return []
    lines = []
    from gpuenv.output import shown  # the metadata on disk is untrusted

    old = shown(", ".join(f"{n} {v}" for n, v in (meta.get("stack") or {}).items()))
    if old and old != stack:
        lines.append(f"note: replacing environment {name} ({old}) with ({stack})")
    if "pip_packages" in meta and meta.get("backend") == "venv":
        extra = hand_installed(current, meta["pip_packages"])
        if extra:
            lines.append(
                f"warning: {', '.join(extra)} were installed into {name} by hand and are not in"
                f" its lockfile, so the rebuilt environment will not have them; keep them with"
                f" `gpuenv add -n {name} {' '.join(extra)}`"
            )
    return lines


def _register_kernel(link: Path, backend: str, name: str, stack: str) -> Path:
    from gpuenv.envs.jupyter import register_kernel
    from gpuenv.envs.store import interpreter

    env = {"CONDA_PREFIX": str(link)} if backend == "conda" else {}
    # the link, not the version folder: the kernel keeps working after a rebuild
    python = interpreter(link)
    return register_kernel(python, name, stack, env, os.environ)


def _how(status: str, replaced: bool) -> str:
    if status != "installed":
        return "unchanged"
    return "rebuilt, replacing the one there" if replaced else "new"


def _finish(
    as_json: bool,
    status: str,
    name: str,
    record: dict[str, Any],
    link: Path,
    *,
    verified: Optional[bool] = None,
    backend: Optional[str] = None,
    replaced: bool = False,
    command: str = "setup",
) -> None:
    verified = bool(record.get("verified")) if verified is None else verified
    if as_json:
        _emit(
            ok=verified,
            exit_status=0 if verified else 1,
            **{
                **(record.get("summary") or {}),
                "status": status,
                "replaced": replaced,
                "name": name,
                "environment": str(link),
                "stack": record.get("stack"),
                "python": record.get("python_version"),
                "backend": backend,
                "lockfile": record.get("lockfile"),
                "lockfile_sha256": record.get("lockfile_sha256"),
                "lab_class": record.get("lab_class"),
                "packages": record.get("packages") or [],
                "kernel": record.get("kernel"),
                "verified": verified,
                "activate": _activate_hint(link, backend, name),
            },
        )
        return
    if status == "unchanged" and backend is None:
        click.echo(
            f"gpuenv {command}: {name} is up to date ({record.get('stack')}, verified"
            f" {record.get('verified_at')}); nothing to do"
        )
        click.echo(f"  activate: {_activate_hint(link, backend, name)}")
        return
    where = f" (lab class {record['lab_class']})" if record.get("lab_class") else ""
    click.echo(
        f"gpuenv {command}: {record.get('stack')}, Python {record.get('python_version')}{where}"
    )
    click.echo(f"  environment: {link}  ({_how(status, replaced)}, {backend})")
    if record.get("packages"):
        click.echo(f"  packages:    {', '.join(record['packages'])}")
    click.echo(f"  lockfile:    {record.get('lockfile')}")
    if record.get("kernel"):
        click.echo(f"  jupyter:     kernel {Path(record['kernel']).name} ({record['kernel']})")
    click.echo(f"  verify:      {'works as planned' if verified else 'FAILED: see above'}")
    click.echo(f"  activate:    {_activate_hint(link, backend, name)}")


def _emit(ok: bool = True, exit_status: int = 0, **fields: Any) -> None:
    from gpuenv.commands.json_output import emit_result

    emit_result(click.get_current_context(), ok, exit_status, **fields)


def _machine_line(machine: object) -> str:
    from gpuenv.machine import Machine

    assert isinstance(machine, Machine)
    gpus = ", ".join(f"{g.name} ({g.compute_capability})" for g in machine.gpus) or "no NVIDIA GPU"
    driver = f"driver {machine.driver.version}" if machine.driver else "no NVIDIA driver"
    return f"machine: {machine.os.name or machine.os.family} {machine.platform}, {gpus}, {driver}"


def _activate_hint(link: Path, backend: Optional[str], name: str) -> str:
    """The line for the user's own shell (`gpuenv activate --hint` prints the same), made from
    the environment itself each time, never read back from the record: the record is a file
    on disk and the line is pasted into a shell."""
    from gpuenv.envs.activation import ActivationError, activate_hint, detect_shell

    shell = detect_shell(os.environ, sys.platform == "win32")
    if backend is None:
        backend = "conda" if (link / "conda-meta").is_dir() else "venv"
    try:
        return activate_hint(link, backend, shell, name)
    except ActivationError as exc:
        # the environment is installed and works; only a shell line cannot name its path
        return f"gpuenv run -n {name} -- COMMAND ({exc})"
