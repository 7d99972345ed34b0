"""Requirement parsing: what users type, and the pins the knowledge base holds."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

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
