"""gpuenv's own header for the lockfiles it writes: how to install the file, with which tools,
and the exact command that regenerates it.

What other tools can do with each file was tried for real (docs/lockfiles.md says how):
uv 0.13.9 and pip 26.3 install a pylock.toml, and refuse it on a platform its `environments`
exclude. conda-lock 4.0 reads gpuenv's conda-lock files (`conda-lock render`). Only gpuenv can
install a conda-lock file whose pip entries are portable (`index:///...`). The same holds for
one without conda packages: gpuenv gets Python from uv, while conda-lock and micromamba would
build an environment with no Python to install the pip entries into.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from gpuenv.resolve.plan import Plan

UNKNOWN_COMMAND = (
    "run again the gpuenv command that wrote it (the plan it was locked from is in the file)"
)
CHECK_LINE = "the same command with --check (exit 1 when stale)"


def _stack(plan: Plan) -> str:
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
    return (
        f"{stack or 'no framework'} for {plan.platform}, Python {plan.python} ({plan.accelerator})"
    )


def _comment(lines: list[str]) -> str:
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)


def conda_lock_header(
    path: Path,
    plan: Plan,
    command: Optional[str],
    *,
    conda: int,
    pip: int,
    portable_pip: int,
    not_portable: tuple[str, ...] = (),
    up_to_date: str = CHECK_LINE,
) -> str:
    """`not_portable`: the projects a portable lock names by a local path (no index has them);
    `up_to_date`: how to tell whether the file is current (setup's files have no --check)."""
    name = Path(path).name
    if portable_pip:
        others = [
            "Other tools: none. Its pip entries are portable (index:///PROJECT/FILE: a file name",
            "and a sha256, no host), which only `gpuenv install` finds on the configured index.",
        ]
    elif conda == 0:
        others = [
            "Other tools: none. This file holds pip packages only, and gpuenv provides their",
            "Python itself; conda-lock install and micromamba would build an environment without",
            "Python. `gpuenv lock --format pylock` writes a pylock.toml that uv and pip install.",
        ]
    else:
        others = [
            "Other tools: conda-lock reads it (`conda-lock render --kind explicit FILE` lists",
            "the same files and hashes). `conda-lock install -n ENV FILE` and `micromamba create",
            "-n ENV -f FILE` are meant to install such files; gpuenv has not tried them (no conda",
            "where it is tested), and they do not verify the GPU afterwards.",
        ]
    if not_portable:  # local files no index has: gpuenv.not_portable says where and why
        others.append(
            f"Not portable: {', '.join(not_portable)}, named by a path on the machine that locked"
            " it (see gpuenv.not_portable below)."
        )
    return _comment(
        [
            f"gpuenv lockfile (conda-lock v1 format): {_stack(plan)}.",
            f"Written by gpuenv ({conda} conda and {pip} pip packages, each with its hash).",
            "Do not edit it: change the inputs and regenerate it.",
            "",
            f"Install:     gpuenv install {name} [--name ENV | --prefix DIR]",
            "             (every file checked against its hash, switched in atomically)",
            f"Regenerate:  {command or UNKNOWN_COMMAND}",
            f"Up to date?  {up_to_date}",
            *others,
        ]
    )


def pylock_header(
    path: Path, plan: Plan, command: Optional[str], up_to_date: str = CHECK_LINE
) -> str:
    name = Path(path).name
    return _comment(
        [
            f"gpuenv lock (PEP 751): {_stack(plan)}.",
            "Written by gpuenv from uv's resolution; gpuenv's plan is in [tool.gpuenv].",
            "",
            f"Install:     gpuenv install {name} [--name ENV | --prefix DIR]",
            f"  or:        uv pip install -r {name}   (into a Python {plan.python} environment)",
            f"  or:        pip install -r {name}      (tried with pip 26.3: experimental there)",
            f"             `environments` below makes these refuse other platforms than {plan.platform}.",
            f"Regenerate:  {command or UNKNOWN_COMMAND}",
            f"Up to date?  {up_to_date}",
        ]
    )
