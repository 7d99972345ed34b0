"""gpuenv's public Python API: the CLI's stages as functions, for lab tools and apps.

    import gpuenv.api as gpuenv

    machine = gpuenv.describe(gpu="RTX 3090", driver="535.183.01", os="linux")
    plan = gpuenv.resolve(["torch"], machine)
    print(gpuenv.explain(["torch"], machine))

Typed values in, typed values out (Machine, Plan, LockResult, InstallResult, Report); nothing is
printed; every error meant for a user is a `gpuenv.errors.GpuenvError` whose `exit_code` is the
one `gpuenv` would exit with. docs/api.md says what is kept stable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from gpuenv.errors import USAGE_EXIT, GpuenvError

if TYPE_CHECKING:
    from gpuenv.envs.transaction import InstallResult
    from gpuenv.lock.pipeline import LockResult
    from gpuenv.machine import Machine
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.resolve.plan import Plan
    from gpuenv.verify.report import Report

__all__ = [
    "ApiUsageError",
    "GpuenvError",
    "describe",
    "detect",
    "explain",
    "install",
    "lock",
    "resolve",
    "verify",
]

Requirements = Union[str, Sequence[str]]


class ApiUsageError(GpuenvError, ValueError):
    """An argument the API cannot use (a bad Python version, a wrong type): exit 2."""

    exit_code = USAGE_EXIT


def detect(*, timeout: float = 5.0) -> Machine:
    """This machine, observed: OS, CPU, NVIDIA driver and GPUs, Pythons (`gpuenv detect`)."""
    from gpuenv.detect import detect_machine

    return detect_machine(timeout=timeout)


def describe(
    gpu: Optional[str] = None,
    driver: Optional[str] = None,
    os: Optional[str] = None,
    arch: Optional[str] = None,
) -> Machine:
    """A machine you are not sitting at (`--gpu --driver --os --arch`): a GPU name, compute
    capability or PCI id; a driver version; an OS (linux, windows, wsl, macos, or a name such as
    win11); a CPU architecture. An unknown GPU (TargetError) or OS (MachineError) is exit 2. What is not
    given is assumed as the CLI assumes it (no GPU, the driver the GPU's newest toolkit needs,
    this machine's OS and architecture)."""
    from gpuenv.machine.describe import check_flag_text, describe_machine, os_family

    for flag, value in (("--gpu", gpu), ("--driver", driver), ("--os", os), ("--arch", arch)):
        check_flag_text(flag, value)
    family = os_family(os)[0] if os is not None else None
    return describe_machine(_kb(), gpu=gpu, driver=driver, os_name=family, arch=arch)


def resolve(
    requirements: Requirements = (),
    machine: Optional[Machine] = None,
    *,
    python: Optional[str] = None,
    no_gpu: bool = False,
    require_gpu: bool = False,
    gpu_index: Optional[int] = None,
) -> Plan:
    """The newest stack that runs on `machine` (default: this one, detected) for requirements
    such as "torch", "tensorflow>=2.11", "jax" (default: torch), as `gpuenv resolve` plans it.
    Pure: no network. An infeasible stack under `require_gpu` is a ResolveError (exit 3)."""
    from gpuenv.resolve import DEFAULT_REQUIREMENTS
    from gpuenv.resolve import resolve as resolve_plan

    return resolve_plan(
        _machine(machine),
        _requirements(requirements) or DEFAULT_REQUIREMENTS,
        kb=_kb(),
        python=_python(python),
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        gpu_index=gpu_index,
    )


def explain(
    requirements: Requirements = (),
    machine: Optional[Machine] = None,
    *,
    python: Optional[str] = None,
    no_gpu: bool = False,
    require_gpu: bool = False,
    gpu_index: Optional[int] = None,
) -> str:
    """The text `gpuenv explain` prints: the stack, why, and every rejected candidate with the
    rule that rejected it. (The CLI's notes on what it assumed of a described machine go to its
    stderr and are not part of it.)"""
    from gpuenv.resolve.report import render

    plan = resolve(
        requirements,
        machine,
        python=python,
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        gpu_index=gpu_index,
    )
    return render(plan, explain=True)


def lock(
    requirements_or_plan: Union[Requirements, Plan],
    output: Union[str, Path],
    machine: Optional[Machine] = None,
    *,
    python: Optional[str] = None,
    no_gpu: bool = False,
    require_gpu: bool = False,
    channels: Sequence[str] = (),
    extra_indexes: Sequence[str] = (),
    exclude_newer: str = "auto",
    probe: bool = True,
    allow_cpu_fallback: bool = False,
    format: str = "conda-lock",
) -> LockResult:
    """Lock a plan (or requirements, resolved as `resolve` does) into a lockfile at `output`.

    As `gpuenv lock`: the indexes are your pip/uv configuration plus `extra_indexes`; the conda
    channels default to conda-forge; unless `probe=False` the indexes are asked what they
    publish first, and a GPU build they do not have fails (SourceUnreachableError, exit 5)
    unless `allow_cpu_fallback`. A lockfile for another machine (a `machine` given, or a plan
    for another platform) records default-index files by name and hash and refuses wheels only
    this machine's folders hold. Not done here: lab files, `--check`, the regenerate command in
    the lockfile's header, and starting uv beside the probe (the CLI's speed-up)."""
    from gpuenv.index.config import user_index_config, with_indexes
    from gpuenv.lock.conda import DEFAULT_CHANNELS
    from gpuenv.lock.fallback import policy_for
    from gpuenv.lock.names import PYLOCK, check_output
    from gpuenv.lock.pipeline import LockOptions, lock_plan
    from gpuenv.machine.describe import host_platform
    from gpuenv.resolve.plan import Plan

    out = Path(output)
    check_output(format, out)  # LockNameError, exit 2
    indexes = with_indexes(user_index_config(), tuple(extra_indexes))
    if isinstance(requirements_or_plan, Plan):
        if machine is not None:
            raise ApiUsageError("lock: a plan was made for its machine already; pass no machine")
        plan = ideal = requirements_or_plan
        elsewhere = plan.platform != host_platform()
    else:
        elsewhere = machine is not None
        kb = _kb()
        target = _machine(machine)
        reqs = _requirements(requirements_or_plan)
        ideal = plan = resolve(reqs, target, python=python, no_gpu=no_gpu, require_gpu=require_gpu)
        if probe:
            from gpuenv.lock.availability import resolve_with_sources
            from gpuenv.resolve import DEFAULT_REQUIREMENTS

            sourced = resolve_with_sources(
                target,
                reqs or DEFAULT_REQUIREMENTS,
                kb,
                indexes,
                ideal=ideal,
                fallback=policy_for(allow_cpu_fallback),
                cpu_flag="allow_cpu_fallback=True",
                python=_python(python),
                no_gpu=no_gpu,
                require_gpu=require_gpu,
            )
            plan, ideal = sourced.plan, sourced.ideal
    options = LockOptions(
        output=out,
        channels=tuple(channels) or DEFAULT_CHANNELS,
        portable=elsewhere and format != PYLOCK,
        exclude_newer=exclude_newer,
        indexes=indexes,
        format=format,
        local_paths=not elsewhere,
    )
    return lock_plan(plan, options, ideal)


def install(
    lockfile: Union[str, Path],
    *,
    name: Optional[str] = None,
    prefix: Optional[Union[str, Path]] = None,
    replace: bool = False,
    wheelhouse: Optional[Union[str, Path]] = None,
    offline: bool = False,
    smoke_test: bool = True,
    lock_timeout: Optional[float] = None,
    extra_indexes: Sequence[str] = (),
    channels: Sequence[str] = (),
    allow_any_origin: bool = False,
) -> InstallResult:
    """Install a lockfile into an environment, atomically (`gpuenv install`): by `name` in
    gpuenv's store (default: named after the lockfile, jax.conda-lock.yml -> jax) or at
    `prefix`. Already installed from this very file: nothing is done (`changed` is False).

    Refused: a file that is no lockfile (LockfileError, exit 2), a bad name (StoreInputError,
    exit 2), an environment of another stack there unless `replace` (StoreInputError, exit 2),
    files from origins you did not configure unless `allow_any_origin` (exit 2); a hash
    mismatch is a HashMismatchError (exit 1) and leaves the old environment as it was."""
    from gpuenv.envs.install_lockfile import env_location, install_lockfile, name_from_lockfile
    from gpuenv.envs.store import interpreter
    from gpuenv.envs.transaction import InstallResult

    path = Path(lockfile)
    if not path.is_file():
        raise ApiUsageError(f"install: {path}: no such file")
    where_prefix = Path(prefix) if prefix is not None else None
    if name is None and where_prefix is None:
        name = name_from_lockfile(path)
    done = install_lockfile(
        path,
        env_location(name, where_prefix),
        offline=offline,
        wheelhouse=Path(wheelhouse) if wheelhouse is not None else None,
        smoke=smoke_test,
        lock_timeout=lock_timeout,
        extra_indexes=tuple(extra_indexes),
        channels=tuple(channels),
        allow_any_origin=allow_any_origin,
        replace=replace,
    )
    if done.result is not None:
        return done.result
    env_dir = done.where.current()  # unchanged: the environment built from this file
    assert env_dir is not None
    return InstallResult(
        changed=False,
        env_dir=env_dir,
        link=done.where.link,
        python=interpreter(env_dir),
        backend=_backend(env_dir),
    )


def verify(
    *,
    name: Optional[str] = None,
    prefix: Optional[Union[str, Path]] = None,
    timeout: float = 120.0,
) -> Report:
    """Probe an installed environment (default: `default`) against the plan it was locked
    from (`gpuenv verify`). A failed check is in the Report (`report.ok` is False), not raised;
    no environment there is EnvironmentNotFound (exit 2), a corrupt one CorruptEnvironment
    (exit 2)."""
    from gpuenv.envs.install_lockfile import env_location
    from gpuenv.envs.store import interpreter
    from gpuenv.verify import verify_environment
    from gpuenv.verify.installed import installed_environment, stored_expectations

    where = env_location(name, Path(prefix) if prefix is not None else None)
    env_dir = installed_environment(where)
    expectations = stored_expectations(env_dir)
    return verify_environment(interpreter(env_dir), expectations, timeout=timeout)


def _kb() -> KnowledgeBase:
    from gpuenv.recipes import load_knowledge_base

    return load_knowledge_base()


def _machine(machine: Optional[Machine]) -> Machine:
    from gpuenv.machine import Machine

    if machine is None:
        return detect()
    if not isinstance(machine, Machine):
        raise ApiUsageError(
            f"expected a Machine (from detect() or describe()), not {type(machine).__name__}"
        )
    return machine


def _requirements(requirements: Requirements) -> tuple[str, ...]:
    if isinstance(requirements, str):
        return (requirements,)
    reqs = tuple(requirements)
    if not all(isinstance(r, str) for r in reqs):
        raise ApiUsageError("requirements are strings such as 'torch' or 'tensorflow>=2.11'")
    return reqs


def _python(python: Optional[str]) -> Optional[str]:
    from gpuenv.machine.describe import PYTHON_VERSION

    if python is not None and not re.fullmatch(PYTHON_VERSION, str(python)):
        raise ApiUsageError(f"python={python!r}: expected a Python version such as '3.11'")
    return python


def _backend(env_dir: Path) -> str:
    from gpuenv.envs.store import read_metadata

    return str(read_metadata(env_dir).get("backend"))
