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
