"""The package index the benchmarks lock and install from.

The framework indexes may be unreachable and the default index slow or metered, and network
variance would swamp what is measured; so every lock and install here reads a local index:

- `--index URL`: a real index or mirror (this project's VM has one at file:///opt/pypi/simple
  with jax and its dependencies), for the real cost of real wheels;
- otherwise (and in `--quick` mode) stand-ins built on the spot: wheels named and versioned like
  the plan's (jax, jaxlib, numpy), with real metadata and dependencies, in pure Python, with a
  tiny jax that passes gpuenv's jax probe (devices, a 32x32 product), so setup's verify runs.

For `setup` with torch, `--torch-wheel FILE` names a CPU torch wheel; it gets its own local
index, standing in for the PyTorch index the plan routes torch to, and its dependencies come
from `--index`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from _common import GPUENV, REPO, clean_env, output

sys.path.insert(0, str(REPO / "tests" / "support"))
from localrepos import build_simple_index, build_wheel

PY = f"{sys.version_info.major}.{sys.version_info.minor}"

_JAX = '''"""Stand-in for jax {version} (gpuenv benchmarks): answers gpuenv's jax probe on a CPU."""
__version__ = "{version}"


class _Device:
    id = 0
    platform = "cpu"
    device_kind = "cpu"
    compute_capability = None

    def __repr__(self):
        return "TFRT_CPU_0"

    def __lt__(self, other):
        return False


CPU = _Device()


def devices(backend=None):
    if backend not in (None, "cpu"):
        raise RuntimeError("Unknown backend: '%s' requested, but no platforms are found" % backend)
    return [CPU]


def default_backend():
    return "cpu"
'''

_JAX_NUMPY = """from jax import CPU

float32 = "float32"


class Array:
    def __init__(self, rows):
        self.rows = [[float(x) for x in row] for row in rows]

    def block_until_ready(self):
        return self

    def devices(self):
        return {CPU}

    def tolist(self):
        return self.rows


def asarray(rows, dtype=None):
    return Array(rows)


def dot(a, b):
    cols = list(zip(*b.rows))
    return Array([[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a.rows])
"""


@dataclass(frozen=True)
class Stack:
    """What setup and install benchmarks install: the framework, its index, a check script."""

    framework: str  # jax or torch
    index: str  # the default index for everything
    framework_index: Optional[str]  # where the framework itself comes from, when elsewhere
    version: str
    check: str  # the import/compute check a user runs after installing


def jax_plan(python: str) -> dict[str, object]:
    flags = ["--no-gpu", "--os", "linux", "--arch", "x86_64", "--python", python, "--json"]
    plan: dict[str, object] = json.loads(output([*GPUENV, "resolve", "jax", *flags], clean_env()))
    return plan


def standin_index(root: Path, python: str) -> str:
    """A local index with stand-ins for the jax CPU plan's packages (and their dependencies)."""
    plan = jax_plan(python)
    pins = dict(
        str(p["requirement"]).split("==", 1)
        for p in plan["pip"]  # type: ignore[attr-defined]
    )
    version, jaxlib = pins["jax"], pins.get("jaxlib", pins["jax"])
    wheels = root / "standin-wheels"
    built = [
        build_wheel(
            wheels,
            "jax",
            version,
            requires=[f"jaxlib=={jaxlib}", "numpy>=1.26", "opt-einsum"],
            files={
                "jax/__init__.py": _JAX.format(version=version),
                "jax/numpy.py": _JAX_NUMPY,
            },
        ),
        build_wheel(wheels, "jaxlib", jaxlib, requires=["numpy>=1.26", "ml-dtypes>=0.5"]),
        build_wheel(wheels, "numpy", "2.2.6"),
        build_wheel(wheels, "ml-dtypes", "0.5.4", requires=["numpy>=1.21"]),
        build_wheel(wheels, "opt-einsum", "3.4.0"),
    ]
    return build_simple_index(root / "standin-index", built)


JAX_CHECK = (
    "import jax.numpy as jnp; a = jnp.asarray([[1.0] * 32] * 32, dtype=jnp.float32);"
    " jnp.dot(a, a).block_until_ready()"
)
TORCH_CHECK = "import torch; a = torch.ones(32, 32); (a @ a).sum().item()"


def make_stack(root: Path, index: Optional[str], torch_wheel: Optional[Path], python: str) -> Stack:
    if index is None:
        index = standin_index(root, python)
    if torch_wheel is None:
        version = dict(
            str(p["requirement"]).split("==", 1)
            for p in jax_plan(python)["pip"]  # type: ignore[attr-defined]
        )["jax"]
        return Stack("jax", index, None, version, JAX_CHECK)
    version = torch_wheel.name.split("-")[1]
    torch_index = build_simple_index(root / "torch-index", [torch_wheel])
    return Stack("torch", index, torch_index, version, TORCH_CHECK)
