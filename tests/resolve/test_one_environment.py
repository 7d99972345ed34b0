"""Several frameworks in one Linux environment take CUDA, cuDNN and NCCL from NVIDIA's pip wheels:
a plan either agrees (one package per library of recipes/nvidia.toml, one version per package) or
says which clash kept a framework off the GPU, and an explicit request that cannot agree is an
error naming both requirements and the clash."""

from __future__ import annotations

import itertools

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from gpuenv.resolve import resolve
from gpuenv.resolve.resolver import ResolveError


def _agreement_problems(plan, kb) -> list[str]:  # type: ignore[no-untyped-def]
    """What breaks "one package per library, one version per package" in a plan."""
    problems = []
    by_library: dict[str, set[str]] = {}
    specs: dict[str, list[Requirement]] = {}
    for choice in plan.frameworks.values():
        for text in choice.nvidia:
            req = Requirement(text)
            library = kb.library_of(req.name)
            if library:
                by_library.setdefault(library, set()).add(req.name)
            specs.setdefault(req.name, []).append(req)
    for library, packages in by_library.items():
        if len(packages) > 1:
            problems.append(f"{library}: {sorted(packages)}")
    for package, reqs in specs.items():
        pins = [Version(s.version) for r in reqs for s in r.specifier if s.operator == "=="]
        for pin in pins:
            if not all(r.specifier.contains(pin, prereleases=True) for r in reqs):
                problems.append(f"{package}: =={pin} against {[str(r) for r in reqs]}")
    return problems


def test_two_cudnn_builds_on_one_path_are_not_planned(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("RTX 4090", "580.95.05", "linux")
    plan = resolve(machine, ["torch", "tensorflow"], kb=kb, python="3.12")
    assert _agreement_problems(plan, kb) == []
    assert plan.frameworks["torch"].gpu and plan.frameworks["tensorflow"].gpu
    assert (plan.frameworks["torch"].version, plan.frameworks["torch"].variant) != (
        "2.15.0",
        "cu132",
    )
    trades = [r for r in plan.reasons if r.startswith("Trade-off: torch")]
    assert trades and "cudnn" in trades[0] and "instead of torch 2.15.0 [cu132]" in trades[0]
    # torch 2.15.0 alone keeps its CUDA 13 cuDNN
    alone = resolve(machine, ["torch"], kb=kb, python="3.12")
    assert alone.frameworks["torch"].version == "2.15.0"


def test_a_build_whose_pins_are_unknown_is_not_combined_blindly(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # torch 2.6.0 [cu118]'s NVIDIA pins are not recorded: beside TensorFlow 2.14's pinned cu11
    # wheels nothing says they agree, so it is not the plan
    machine = describe("Tesla T4", "470.199.02", "linux")
    plan = resolve(machine, ["torch", "tensorflow"], kb=kb)
    assert _agreement_problems(plan, kb) == []
    assert (plan.frameworks["torch"].version, plan.frameworks["torch"].variant) != (
        "2.6.0",
        "cu118",
    )
    assert plan.frameworks["torch"].gpu and plan.frameworks["tensorflow"].gpu


def test_an_explicit_request_that_cannot_agree_is_an_error_naming_both(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("RTX A6000", "550.54.14", "linux")
    with pytest.raises(ResolveError) as caught:
        resolve(machine, ["torch==2.3.1", "tensorflow==2.16.*"], kb=kb, python="3.11")
    text = str(caught.value)
    assert "'torch==2.3.1'" in text and "'tensorflow==2.16.*'" in text
    assert "nvidia-" in text and "gpuenv setup --split" in text
    assert caught.value.exit_code == 3


def test_require_gpu_refuses_a_framework_kept_off_the_gpu_by_the_other(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("RTX A6000", "550.54.14", "linux")
    plan = resolve(machine, ["torch==2.3.1", "tensorflow"], kb=kb, python="3.11")
    assert _agreement_problems(plan, kb) == []
    with pytest.raises(ResolveError, match="cannot share one environment"):
        resolve(
            machine, ["torch==2.3.1", "tensorflow==2.16.2"], kb=kb, python="3.11", require_gpu=True
        )


def test_the_plan_records_what_each_framework_brings(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GTX 1080 Ti", "535.183.01", "linux"), ["torch", "tensorflow"], kb=kb)
    data = plan.to_json()
    for name in ("torch", "tensorflow"):
        assert any(r.startswith("nvidia-cudnn-cu12") for r in data["frameworks"][name]["nvidia"])
    assert any(r.startswith("One environment: tensorflow, torch") for r in plan.reasons)
    lone = resolve(describe("GTX 1080 Ti", "535.183.01", "linux"), ["jax"], kb=kb).to_json()
    assert "nvidia" in lone["frameworks"]["jax"]  # what it brings, even alone


GPUS = ["GTX 780", "GTX 1080 Ti", "Tesla V100", "Tesla T4", "RTX 3090", "H100", "RTX 5090"]
DRIVERS = ["450.80.02", "470.199.02", "535.183.01", "550.54.14", "570.86.15", "580.95.05"]
STACKS = [
    ["torch", "tensorflow"],
    ["torch", "jax"],
    ["tensorflow", "jax"],
    ["torch", "tensorflow", "jax"],
]


@pytest.mark.parametrize(("gpu", "driver"), list(itertools.product(GPUS, DRIVERS)))
def test_every_plan_on_linux_agrees_or_names_its_clash(describe, kb, gpu, driver) -> None:  # type: ignore[no-untyped-def]
    machine = describe(gpu, driver, "linux")
    for stack in STACKS:
        try:
            plan = resolve(machine, stack, kb=kb)
        except ResolveError:
            continue  # refused, with its reason: nothing planned
        assert _agreement_problems(plan, kb) == [], (gpu, driver, stack)
        for name, choice in plan.frameworks.items():
            if not choice.gpu and machine.gpus:
                assert any(w.startswith(f"{name} ") for w in plan.warnings), (gpu, driver, stack)
