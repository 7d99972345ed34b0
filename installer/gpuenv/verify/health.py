"""`gpuenv verify --health`: a check fit for a Slurm prolog or a node health check. Quick (no
framework is imported unless asked: its installed version is read from its metadata), bounded
in time as a whole, silent when all is well, one line per problem otherwise.

What it checks: the environment is there and readable; its interpreter starts; each framework
of its plan is installed at the planned version; with a CUDA plan, an NVIDIA GPU and driver are
visible and the driver is not older than the one the plan was made for; with `imports`, each
framework imports too.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpuenv.envs.store import EnvLocation

_VERSIONS = (
    "import importlib.metadata as m, json, sys\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        out[name] = m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        out[name] = None\n"
    "print(json.dumps(out))\n"
)


@dataclass
class Health:
    ok: bool = True
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def fail(self, problem: str) -> None:
        self.ok = False
        self.problems.append(problem)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": self.problems, "seconds": round(self.seconds, 3)}


def check_health(where: EnvLocation, *, timeout: float, imports: bool = False) -> Health:
    """The environment at `where`, checked within `timeout` seconds in all."""
    from gpuenv.envs.errors import InstallError
    from gpuenv.envs.store import interpreter, read_metadata

    start = time.monotonic()
    health = Health()
    try:
        env_dir = where.current()
        if env_dir is None:
            health.fail(f"no gpuenv environment at {where.link}")
            return health
        plan = read_metadata(env_dir).get("plan") or {}
        python = interpreter(env_dir)
        frameworks = plan.get("frameworks") or {}
        _installed(python, frameworks, health, _left(start, timeout))
        if imports and health.ok:
            _imports(python, list(frameworks), health, _left(start, timeout))
        if plan.get("accelerator") == "cuda":
            _gpu(plan.get("driver"), health, _left(start, timeout))
    except InstallError as exc:  # unreadable metadata: no environment to vouch for
        health.fail(str(exc))
    except subprocess.TimeoutExpired:
        health.fail(f"the check did not finish within {timeout:g}s")
    finally:
        health.seconds = time.monotonic() - start
    return health


def _left(start: float, timeout: float) -> float:
    left = timeout - (time.monotonic() - start)
    if left <= 0:
        raise subprocess.TimeoutExpired("gpuenv verify --health", timeout)
    return left


def _installed(python: Path, frameworks: dict[str, Any], health: Health, timeout: float) -> None:
    # the package each framework was installed as (tensorflow-gpu 1.15.5, tensorflow-cpu)
    packages = {n: str((c or {}).get("package") or n) for n, c in frameworks.items()}
    names = list(packages.values())
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", _VERSIONS, *names],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except OSError as exc:
        health.fail(f"the environment's Python cannot start: {exc.strerror or exc}")
        return
    if done.returncode != 0:
        health.fail(f"the environment's Python failed: {done.stderr.strip()[-200:]}")
        return
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for name, choice in frameworks.items():
        planned = str((choice or {}).get("version", ""))
        package = packages[name]
        have = found.get(package)
        if have is None:
            health.fail(f"{package} is not installed (planned {planned})")
        elif have.split("+")[0] != planned.split("+")[0]:
            health.fail(f"{package} {have} is installed, {planned} was planned")


def _imports(python: Path, names: list[str], health: Health, timeout: float) -> None:
    from gpuenv.envs.backends import smoke_test

    failure = smoke_test(python, names, timeout=timeout)
    if failure:
        health.fail(failure)


def _gpu(planned_driver: Optional[str], health: Health, timeout: float) -> None:
    from gpuenv.detect import detect_machine
    from gpuenv.versions import version_key

    machine = detect_machine(timeout=min(timeout, 10.0))
    if not machine.gpus:
        health.fail("no NVIDIA GPU is visible, and the environment's plan is for CUDA")
        return
    if machine.driver is None:
        health.fail("no NVIDIA driver is visible, and the environment's plan is for CUDA")
        return
    have = machine.driver.version
    if planned_driver and version_key(have) < version_key(planned_driver):
        health.fail(f"driver {have} is older than {planned_driver}, the one the plan was made for")
