"""Requirement parsing: what users type, and the pins the knowledge base holds."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from gpuenv.resolve import resolve
from gpuenv.resolve.requirements import RequirementError, parse_pin, parse_requirements


@pytest.mark.parametrize(
    ("text", "name", "spec"),
    [
        ("torch", "torch", ""),
        ("tensorflow>=2.11", "tensorflow", ">=2.11"),
        ("Jax == 0.4.*", "jax", "==0.4.*"),
        ("tensorflow[and-cuda]==2.15.1", "tensorflow", "==2.15.1"),
        (
            "nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'",
            "nvidia-cudnn-cu12",
            "==9.1.0.70",
        ),
        ("nvidia_cudnn.cu12 (>=9.8,<10)", "nvidia-cudnn-cu12", ">=9.8,<10"),
    ],
)
def test_pins(text: str, name: str, spec: str) -> None:
    pin = parse_pin(text)
    assert pin.name == name and pin.specifier == SpecifierSet(spec)


@pytest.mark.parametrize("text", ["torch>=", ">=2", "torch @ https://example.invalid/t.whl", ""])
def test_bad_requirements(text: str) -> None:
    with pytest.raises(RequirementError):
        parse_pin(text)


def test_frameworks_merge_and_aliases() -> None:
    reqs = parse_requirements(["tensorflow>=2.11", "torchvision", "torch<2.8", "tensorflow<2.16"])
    assert [r.framework for r in reqs] == ["torch", "tensorflow"]
    torch, tf = reqs
    assert torch.with_projects == ("torchvision",) and torch.specifier == SpecifierSet("<2.8")
    assert tf.specifier == SpecifierSet(">=2.11,<2.16")


def test_unknown_framework() -> None:
    with pytest.raises(RequirementError, match="unknown framework 'tensorfloww'"):
        parse_requirements(["tensorfloww"])


def test_markers_are_read_in_knowledge_base_pins_but_refused_from_users() -> None:
    # the knowledge base's companion pins carry markers that uv evaluates for the target ...
    assert parse_pin("nvidia-nccl-cu12==2.21.5; sys_platform == 'linux'").name == "nvidia-nccl-cu12"
    # ... but a framework requirement is planned for one machine: a marker there would be dropped
    with pytest.raises(RequirementError, match="environment marker"):
        parse_requirements(["torch; sys_platform == 'win32'"])
    # extras are kept: they choose the build (jax[cuda12] takes the cuda12 plugin)
    assert parse_requirements(["tensorflow[and-cuda]>=2.15"])[0].extras == ("and-cuda",)
    assert parse_requirements(["torch>=2.1 "])[0].specifier == SpecifierSet(">=2.1")


def test_tensorflow_gpu_says_what_it_was_planned_as(kb, describe) -> None:  # type: ignore[no-untyped-def]
    """1.15.0's plain tensorflow is itself a CUDA build; 1.15.5's GPU build is only published
    as tensorflow-gpu (build_info.py of each wheel, recipes/tensorflow.toml). Neither is the
    "GPU support since 2.1" story."""
    machine = describe("GeForce GTX 1080 Ti", "535.183.01", "linux")
    said = {}
    for version in ("1.15.0", "1.15.5"):
        plan = resolve(machine, [f"tensorflow-gpu=={version}"], kb=kb)
        (said[version],) = [w for w in plan.warnings if "retired name" in w]
        assert "since 2.1" not in said[version]
    assert "planned as tensorflow 1.15.0, itself a CUDA build" in said["1.15.0"]
    assert "installed as tensorflow-gpu 1.15.5" in said["1.15.5"]
    assert any(p.requirement == "tensorflow-gpu==1.15.5" for p in plan.pip)


def test_a_cudnn_other_than_the_builds_is_explained(kb, describe) -> None:  # type: ignore[no-untyped-def]
    machine = describe("GeForce GTX 1080 Ti", "535.183.01", "linux")
    old = resolve(machine, ["tensorflow==1.15.5"], kb=kb)
    assert old.frameworks["tensorflow"].cudnn == "7.4" and "cudnn=7.6" in old.conda
    assert any(r.startswith("cuDNN 7.6 for tensorflow 1.15.5") and "7.4" in r for r in old.reasons)
    same = resolve(machine, ["tensorflow==2.5.0"], kb=kb)  # built with 8.1, gets 8.1
    assert not any(r.startswith("cuDNN ") for r in same.reasons)
