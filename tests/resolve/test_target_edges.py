"""The resolver's target at its edges, through the Python API (the CLI checks --python itself,
so these are what gpuenv.api callers see). Found by mutation testing (area resolve-rules)."""

from __future__ import annotations

import pytest

from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.target import TargetError


@pytest.mark.parametrize("python", ["3", "2.7", "3.x", "three"])
def test_a_python_that_is_not_a_python_3_version_is_refused(kb: KnowledgeBase, python: str) -> None:
    here = describe_machine(
        kb, gpu="GeForce RTX 3090", driver="550.54.14", os_name="linux", arch=None
    )
    with pytest.raises(TargetError, match=r"expected a Python 3 version such as 3\.11"):
        resolve(here, ["torch"], kb=kb, python=python)


def test_a_python_pin_keeps_major_and_minor(kb: KnowledgeBase) -> None:
    here = describe_machine(
        kb, gpu="GeForce RTX 3090", driver="550.54.14", os_name="linux", arch=None
    )
    assert resolve(here, ["torch"], kb=kb, python="3.11.4").python == "3.11"


def test_a_driver_older_than_every_known_branch_is_its_own_branch(kb: KnowledgeBase) -> None:
    from gpuenv.resolve.target import build_target

    here = describe_machine(
        kb, gpu="GeForce GTX 980", driver="550.54.14", os_name="linux", arch=None
    )
    target = build_target(here, kb)
    assert min(target.driver_branches) > 340
    assert target.branch_of("340.108") == 340
    assert target.branch_of("472.50") == 470  # Windows' numbering, in the R470 branch


def test_a_gpu_target_describes_its_gpu(kb: KnowledgeBase) -> None:
    from gpuenv.resolve.target import build_target

    here = describe_machine(
        kb, gpu="GeForce RTX 3090", driver="550.54.14", os_name="linux", arch=None
    )
    assert "sm_86" in build_target(here, kb).describe_gpu()
    none = describe_machine(kb, gpu=None, driver=None, os_name="linux", arch=None)
    assert build_target(none, kb).describe_gpu() == "no NVIDIA GPU"
