"""Doctor's driver advice and summary at their edges: which GPU limits the driver, when the
CUDA toolkit's own driver is worth naming, where the advice applies (WSL2: the Windows host),
and what `gpuenv doctor --json` says about the machine and each environment.

Found by mutation testing (scripts/maint/mutation.py, area doctor).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from gpuenv.doctor import PROBLEM, WARN, EnvironmentInput, diagnose, machine_summary
from gpuenv.doctor.driver import limiting_generation, needed_driver_text, recommended_driver
from gpuenv.machine import Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan
from gpuenv.versions import version_key


def env_for(plan: Plan) -> EnvironmentInput:
    meta: dict[str, Any] = {
        "platform": plan.platform,
        "python": plan.python,
        "accelerator": plan.accelerator,
        "stack": {n: f"{f.version} [{f.variant}]" for n, f in plan.frameworks.items()},
        "plan": plan.to_json(with_rejected=False),
    }
    return EnvironmentInput("default", Path("/envs/default"), meta)


def machine(kb: KnowledgeBase, gpu: str | None, driver: str | None) -> Machine:
    return describe_machine(kb, gpu=gpu, driver=driver, os_name="linux", arch=None)


def test_the_gpu_with_the_oldest_last_driver_branch_limits_the_driver(kb: KnowledgeBase) -> None:
    kepler = machine(kb, "Tesla K80", "470.82.01").gpus[0]  # R470 is its last branch
    maxwell = machine(kb, "GeForce GTX 980", "470.82.01").gpus[0]  # R580
    base = machine(kb, "Tesla K80", "470.82.01")
    for gpus in ((kepler, maxwell), (maxwell, kepler)):
        gen = limiting_generation(kb, dataclasses.replace(base, gpus=gpus))
        assert gen is not None and gen.name == "Kepler"


def test_driver_advice_names_the_windows_host_only_under_wsl(kb: KnowledgeBase) -> None:
    linux = machine(kb, "GeForce RTX 3090", "535.183.01")
    advice = recommended_driver(kb, linux)
    assert advice is not None and "Windows" not in advice.text
    wsl = dataclasses.replace(linux, os=OSInfo("linux", "Ubuntu 24.04", "24.04", wsl=True))
    advice = recommended_driver(kb, wsl)
    assert advice is not None and " on the Windows host (not inside WSL2)" in advice.text


def test_the_newest_toolkits_driver_is_advised_when_the_gpus_branch_reaches_it(
    kb: KnowledgeBase,
) -> None:
    """A knowledge base whose newest toolkit (CUDA 12.4) needs a driver older than the GPU's
    last branch (Maxwell: R580): install that toolkit's driver, not "the newest R580"."""
    older = {v: t for v, t in kb.toolkits.items() if version_key(v) <= version_key("12.4")}
    kb124 = dataclasses.replace(kb, toolkits=older)
    advice = recommended_driver(kb124, machine(kb, "GeForce GTX 980", "470.82.01"))
    assert advice is not None and advice.branch is None
    assert advice.text.startswith("install NVIDIA driver ≥ 550.54.14 ")


def test_the_toolkits_own_driver_is_named_when_it_differs_and_the_gpu_runs_it(
    kb: KnowledgeBase,
) -> None:
    ampere = machine(kb, "GeForce RTX 3090", "470.82.01")
    assert needed_driver_text(kb, ampere, "12.4") == (
        "install NVIDIA driver ≥ 525.60.13 (the floor for CUDA 12.x; CUDA 12.4's own driver,"
        " ≥ 550.54.14, is better)"
    )
    # Kepler ends with R470: CUDA 11.8's own driver (520) is out of its reach, the floor is not
    kepler = machine(kb, "Tesla K80", "418.67")
    assert needed_driver_text(kb, kepler, "11.8") == (
        "install NVIDIA driver ≥ 450.80.02 (the floor for CUDA 11.x)"
    )


def test_json_problems_hold_the_problems_alone(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    d = diagnose(machine(kb, "GeForce GTX 1080 Ti", "470.82.01"), kb, [env_for(plan)], {})
    severities = {f.severity for f in d.findings}
    assert PROBLEM in severities and severities - {PROBLEM}  # others are there too
    problems = d.to_json()["problems"]
    assert problems and {p["severity"] for p in problems} == {PROBLEM}
    assert len(problems) == sum(f.severity == PROBLEM for f in d.findings)


def test_an_environment_with_warnings_only_still_plans_to_use_the_gpu(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    here = machine(kb, "GeForce GTX 1080 Ti", "535.183.01")  # minor-version compatibility
    env = diagnose(here, kb, [env_for(plan)], {}).environments[0]
    assert {f.severity for f in env.findings} == {WARN}
    assert env.gpu == "planned"


def test_the_summary_names_the_os_and_falls_back_to_the_plan(kb: KnowledgeBase) -> None:
    here = dataclasses.replace(
        machine(kb, "GeForce RTX 3090", "560.35.03"), os=OSInfo("linux", "Ubuntu 22.04", "22.04")
    )
    assert machine_summary(kb, here)["os"] == "Ubuntu 22.04"
    plan = resolve(here, ["torch"], kb=kb)
    env = env_for(plan)
    del env.metadata["python"], env.metadata["accelerator"]  # an older gpuenv's metadata
    found = diagnose(here, kb, [env], {}).environments[0]
    assert found.python == plan.python and found.accelerator == "cuda"
