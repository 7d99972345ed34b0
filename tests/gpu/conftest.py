"""GPU tests: `gpu`-marked tests run only where an NVIDIA GPU answers; helpers on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "detect"))

from gpu_here import HAS_GPU  # noqa: E402  (found through the sys.path line above)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU here (nvidia-smi -L lists none)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)
