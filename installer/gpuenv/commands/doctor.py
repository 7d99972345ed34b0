"""`gpuenv doctor`: this machine's GPU and driver, each environment's use of the GPU, and, when
one does not use it, the reason and the fix."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from gpuenv.commands.json_output import emit, json_option
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.doctor import Diagnosis, EnvironmentInput, Finding
    from gpuenv.verify import Report

PROBLEMS_EXIT = 1
_MARK = {"ok": "ok  ", "warn": "warn", "problem": "FAIL"}


def machine_shadowing() -> list[Finding]:
    """CUDA libraries outside gpuenv's store that the loader (Linux) or PATH (Windows) would
    find; macOS has no CUDA to shadow."""
    import os

    platform: str = sys.platform  # a plain str: mypy would judge the other branches unreachable
    if platform.startswith("linux"):
        from gpuenv.doctor.shadowing import machine_shadowing as linux
        from gpuenv.envs.store import store_root

        return linux(os.environ, store=store_root())
    if platform == "win32":
        from gpuenv.doctor.shadowing import windows_path_shadowing

        return windows_path_shadowing(os.environ)
    return []


def _kernels() -> list[Finding]:
    """Jupyter kernels gpuenv registered whose environment can no longer start them."""
    import os

    from gpuenv.doctor.findings import PROBLEM, Finding
    from gpuenv.envs.jupyter import kernels_that_cannot_start
    from gpuenv.envs.store import name_problem
    from gpuenv.output import shown

    out = []
    for folder, env, why in kernels_that_cannot_start(os.environ):
        kernel = Path(folder).name
        name = env if not name_problem(env) else "NAME"  # kernel.json is not gpuenv's to trust
        out.append(
            Finding(
                PROBLEM,
                "kernel-cannot-start",
                shown(f"the Jupyter kernel {kernel} cannot start: {why}"),
                why=(shown(f"{folder}/kernel.json starts it"),),
                fix=(
                    f"`gpuenv setup -n {name} --jupyter` (or `gpuenv add -n {name} ipykernel`),"
                    f" or remove the kernel: `jupyter kernelspec remove {kernel}`",
                ),
            )
        )
    return out


def _env_shadowing(name: str, path: Path) -> tuple[Finding, ...]:
    import os

    if not sys.platform.startswith("linux"):
        return ()
    from gpuenv.doctor.shadowing import environment_shadowing

    return tuple(environment_shadowing(name, path.resolve(), os.environ))


def gather_environments(verify: bool, timeout: float) -> list[EnvironmentInput]:
    """Every environment in gpuenv's store; verified inside itself unless `verify` is False."""
    from gpuenv.doctor import EnvironmentInput
    from gpuenv.envs.inventory import scan_store

    scan = scan_store(sizes=False)
    out = []
    for env in scan.envs:
        report, error = None, None
        if verify:
            report, error = _verify(env.path, env.metadata, timeout)
        out.append(
            EnvironmentInput(
                env.name,
                env.path,
                env.metadata,
                report,
                error,
                shadowing=_env_shadowing(env.name, env.path),
            )
        )
    for entry in scan.broken:  # reported, never read further: the others are still checked
        fix = (
            f"reinstall it (`gpuenv install LOCKFILE --name {entry.name}`), or remove it"
            f" (`gpuenv envs remove {entry.name}`)"
            if entry.made_by_gpuenv
            else "gpuenv did not make it and leaves it alone: move or remove it yourself if it"
            " does not belong in the store"
        )
        out.append(EnvironmentInput(entry.name, entry.path, {}, broken=entry.reason, fix=fix))
    return out


def _verify(
    path: Path, metadata: dict[str, Any], timeout: float
) -> tuple[Optional[Report], Optional[str]]:
    from gpuenv.envs.store import interpreter
    from gpuenv.resolve.plan import Plan
    from gpuenv.verify import Expectations, verify_environment

    try:
        env_dir = path.resolve()
        plan = metadata.get("plan")
        expectations = (
            Expectations.from_plan(Plan.from_json(dict(plan))) if isinstance(plan, dict) else None
        )
        return verify_environment(interpreter(env_dir), expectations, timeout=timeout), None
    except Exception as exc:  # doctor reports what it cannot check; it never crashes on it
        return None, f"{type(exc).__name__}: {exc}"


def render(diagnosis: Diagnosis) -> str:
    m = diagnosis.machine
    lines = ["Machine", f"  OS:      {m['os']}{' (WSL2)' if m['wsl'] else ''}, {m['platform']}"]
    if m["gpus"]:
        for g in m["gpus"]:
            gen = f", {g['generation']}" if g["generation"] else ""
            cc = g["compute_capability"] or "compute capability unknown"
            lines.append(f"  GPU {g['index']}:   {g['name']} ({cc}{gen})")
    else:
        lines.append("  GPU:     no NVIDIA GPU found")
    lines.append(f"  Driver:  {m['driver'] or 'none'}")
    if m["max_cuda"]:
        lines.append(f"  CUDA:    up to {m['max_cuda']} ({m['max_cuda_source']})")
    if m["recommended_driver"]:
        lines.append(f"  Advice:  {m['recommended_driver']}")
    lines += _findings(
        tuple(f for f in diagnosis.machine_findings if f.severity != "problem"), "  "
    )
    lines.append("")
    envs = diagnosis.environments
    lines.append(
        f"Environments ({len(envs)})" if envs else "Environments: none yet (`gpuenv setup`)"
    )
    for e in envs:
        if any(f.code == "broken-entry" for f in e.findings):
            lines.append(f"  {e.name}: BROKEN (see Problems)")
            continue
        stack = ", ".join(f"{k} {v}" for k, v in e.stack.items()) or "-"
        checked = "" if e.verified else " (not verified)"
        lines.append(f"  {e.name}: {stack}, Python {e.python or '?'}")
        lines.append(f"    plan: {e.accelerator}; GPU: {e.gpu}{checked}")
        lines += _findings(tuple(f for f in e.findings if f.severity != "problem"), "    ")
    problems = [f for f in diagnosis.findings if f.severity == "problem"]
    if problems:
        lines += ["", f"Problems ({len(problems)})"]
        for f in problems:
            lines.append(f"  FAIL [{f.subject}] {f.what}")
            lines += [f"       why: {w}" for w in f.why]
            lines += [f"       fix: {x}" for x in f.fix]
    lines += [
        "",
        "Newcomer questions (do I need the CUDA toolkit or cuDNN? what was tensorflow-gpu?"
        " why do TensorFlow and PyTorch ship CUDA differently?): `gpuenv doctor --faq`",
    ]
    return "\n".join(lines)


def _findings(findings: tuple[Finding, ...], indent: str) -> list[str]:
    lines = []
    for f in findings:
        lines.append(f"{indent}{_MARK[f.severity]} {f.what}")
        if f.severity != "ok":
            lines += [f"{indent}     why: {w}" for w in f.why]
        lines += [f"{indent}     fix: {x}" for x in f.fix]
    return lines


@click.command("doctor")
@json_option("Print the diagnosis as JSON.")
@click.option(
    "--no-verify", is_flag=True, help="Do not run verify's probes inside each environment (faster)."
)
@click.option(
    "--faq", is_flag=True, help="Only answer the common questions (CUDA toolkit, cuDNN, ...)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds each framework's verify probe may take.",
)
@click.pass_context
def doctor_command(
    ctx: click.Context, as_json: bool, no_verify: bool, faq: bool, timeout: float
) -> None:
    """Why the GPU is or is not used: this machine's GPU and driver, the CUDA it supports, each
    environment's stack and whether it uses the GPU, and the reason and fix when it does not.

    Exit status 1 when something is a problem, 0 otherwise.
    """
    import os

    from gpuenv.doctor import diagnose
    from gpuenv.doctor.faq import FAQ
    from gpuenv.doctor.faq import render as render_faq

    if faq:
        if as_json:
            emit([a.to_json() for a in FAQ])
        else:
            echo(render_faq())
        return
    from gpuenv.detect import detect_machine
    from gpuenv.recipes import load_knowledge_base

    machine = detect_machine()
    kb = load_knowledge_base()
    envs = gather_environments(not no_verify, timeout)
    # without an NVIDIA GPU nothing loads the machine's CUDA libraries for it: no edit of
    # ld.so.conf is asked for (an environment whose own CUDA libraries are shadowed still is)
    shadowing = machine_shadowing() if machine.gpus else []
    diagnosis = diagnose(machine, kb, envs, os.environ, shadowing + _kernels())
    if as_json:
        emit(diagnosis.to_json())
    else:
        echo(render(diagnosis))
    ctx.exit(0 if diagnosis.ok else PROBLEMS_EXIT)
