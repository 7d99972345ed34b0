"""Helpers for install tests: installable stand-ins, plans and locks made from them."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from gpuenv.index.config import IndexConfig
from gpuenv.lock import LockOptions, lock_plan
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan
from localrepos import build_conda_channel, build_conda_package, build_simple_index, build_wheel

PY = f"{sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class InstallRepos:
    index: str
    channel: str
    wheels: Path

    @property
    def indexes(self) -> IndexConfig:
        return IndexConfig(index_url=self.index, origin="test")


def _stub_jax(version: str) -> dict[str, str]:
    return {"jax/__init__.py": f'__version__ = "{version}"\n'}


def build_install_repos(root: Path) -> InstallRepos:
    wheels = root / "wheels"
    built = (
        [
            build_wheel(wheels, "jax", v, requires=["numpy"], files=_stub_jax(v))
            for v in ("0.4.30", "0.4.31")
        ]
        + [
            build_wheel(wheels, "jaxlib", v, files={"jaxlib/__init__.py": f"__version__ = '{v}'\n"})
            for v in ("0.4.30", "0.4.31")
        ]
        + [
            build_wheel(
                wheels, "numpy", "1.26.4", files={"numpy/__init__.py": "__version__ = '1.26.4'\n"}
            )
        ]
    )
    # A conda "python" that is this machine's interpreter seen through a venv layout: a real,
    # working interpreter whose prefix is the conda environment itself.
    base = Path(sys._base_executable).resolve()  # type: ignore[attr-defined]
    site = Path(sysconfig.get_path("purelib", vars={"base": "", "platbase": ""}).lstrip("/"))
    python = build_conda_package(
        root / "conda",
        "python",
        f"{PY}.99",
        "h0_0_cpython",
        subdir="linux-64",
        files={
            "pyvenv.cfg": f"home = {base.parent}\ninclude-system-site-packages = false\nversion = {PY}.99\n",
            str(site / "_gpuenv_test.txt"): "site-packages\n",
        },
        symlinks={"bin/python": str(base), "bin/python3": str(base)},
    )
    packages = [
        python,
        build_conda_package(root / "conda", "pip", "24.0", "pyh_0", depends=["python >=3.8"]),
        build_conda_package(
            root / "conda",
            "cudatoolkit",
            "11.2.2",
            "h_0",
            subdir="linux-64",
            depends=["__cuda >=11.2"],
        ),
    ]
    return InstallRepos(
        index=build_simple_index(root / "index", built),
        channel=build_conda_channel(root / "channel", packages),
        wheels=wheels,
    )


def jax_plan(version: str = "0.4.30", conda: tuple[str, ...] = ()) -> Plan:
    """A stand-in JAX plan; with conda libraries it is a CUDA 11.2 plan (they need __cuda)."""
    cuda = "11.2" if conda else None
    variant = "cuda11" if conda else "cpu"
    return Plan(
        python=PY,
        platform="linux-64",
        accelerator="cuda" if conda else "cpu",
        glibc=None,
        gpu=None,
        driver=None,
        frameworks={
            "jax": FrameworkChoice("jax", version, variant, cuda, None, "jax", None, bool(conda))
        },
        pip=(PipRequirement(f"jax=={version}"),),
        conda=conda,
        companions=(),
        constraints=(),
        exclude_newer=None,
        warnings=(),
        reasons=(),
        fixes=(),
        rejected=(),
        knowledge_base="test",
    )


def make_lock(repos: InstallRepos, out: Path, plan: Plan, **kw: object) -> Path:
    opts = dict(output=out, indexes=repos.indexes, channels=(repos.channel,), exclude_newer="none")
    lock_plan(plan, LockOptions(**{**opts, **kw}))  # type: ignore[arg-type]
    return out


def gpuenv(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def run_in(python: Path, code: str) -> str:
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
