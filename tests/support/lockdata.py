"""Lockfiles for hostile tests: a valid one written by gpuenv (through conda-lock), loaded as
plain data to be altered, and written back."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from gpuenv.index.config import IndexConfig
from gpuenv.lock.conda import CondaArtifact
from gpuenv.lock.conda_lock.write import build_lockfile, write_lockfile
from gpuenv.lock.model import LockInputs
from gpuenv.lock.pypi import PipArtifact, PipCompile, PipLock, pip_request
from gpuenv.resolve.plan import Plan
from installrepos import jax_plan

SHA_A = "a" * 64
SHA_B = "b" * 64
MD5_C = "c" * 32


def conda_record(name: str = "cudatoolkit", version: str = "11.2.2") -> dict[str, Any]:
    file_name = f"{name}-{version}-h_0.tar.bz2"
    return {
        "name": name,
        "version": version,
        "build": "h_0",
        "build_number": 0,
        "subdir": "linux-64",
        "url": f"https://conda.example/main/linux-64/{file_name}",
        "channel": "https://conda.example/main",
        "file_name": file_name,
        "sha256": SHA_B,
        "md5": MD5_C,
        "depends": ["__cuda >=11.2"],
        "constrains": [],
        "size": 10,
        "noarch": None,
    }


def write_valid(path: Path, *, conda: bool = False, portable: bool = False) -> Path:
    """A lockfile gpuenv wrote: jax and numpy wheels, and with `conda` a conda package."""
    plan = jax_plan("0.4.30", conda=("cudatoolkit=11.2",) if conda else ())
    plan = type(plan)(**{**plan.__dict__, "platform": "linux-64", "python": "3.12"})
    pip = [
        PipArtifact(
            "jax", "0.4.30", "https://files.example/p/jax-0.4.30-py3-none-any.whl", SHA_A, None
        ),
        PipArtifact(
            "numpy", "1.26.4", "https://files.example/p/numpy-1.26.4-py3-none-any.whl", SHA_B, None
        ),
    ]
    inputs = LockInputs(plan, ("https://conda.example/main",), portable, None, ())
    arts = [CondaArtifact(conda_record())] if conda else []
    write_lockfile(build_lockfile(inputs, pip, arts), path)
    return path


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def dump(data: Any, path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def plan_of(data: dict[str, Any]) -> dict[str, Any]:
    plan = json.loads(data["metadata"]["custom_metadata"]["gpuenv.plan"])
    assert isinstance(plan, dict)
    return plan


def set_plan(data: dict[str, Any], plan: Any) -> None:
    data["metadata"]["custom_metadata"]["gpuenv.plan"] = json.dumps(plan)


def package(data: dict[str, Any], name: str) -> dict[str, Any]:
    entry = next(p for p in data["package"] if p["name"] == name)
    assert isinstance(entry, dict)
    return entry


def in_process(*args: str) -> tuple[int, str, str]:
    """Run the gpuenv CLI in this process (fast; monkeypatches apply): exit status, out, err.
    A bug (an exception gpuenv does not own) propagates: a traceback fails the test."""
    import contextlib
    import io

    from gpuenv.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
    sys.stdout.flush()
    return int(code or 0), out.getvalue(), err.getvalue()


def write_for_wheels(
    path: Path, wheels: list[Path], *, python: str = "", base_url: str = "", portable: bool = False
) -> Path:
    """A lockfile of these real wheel files (file:// URLs, or `base_url` + name, and their real
    hashes): no uv needed."""
    import hashlib

    from packaging.utils import parse_wheel_filename

    from installrepos import PY

    plan = jax_plan("0.4.30")
    plan = type(plan)(**{**plan.__dict__, "python": python or PY})
    pip = []
    for wheel in wheels:
        name, version, _, _ = parse_wheel_filename(wheel.name)
        sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        url = base_url + wheel.name if base_url else wheel.resolve().as_uri()
        pip.append(PipArtifact(str(name), str(version), url, sha, None))
    inputs = LockInputs(plan, (), portable, None, ())
    write_lockfile(build_lockfile(inputs, pip, []), path)
    return path


def compile_pip(plan: Plan, *, indexes: IndexConfig, exclude_newer: str | None) -> PipLock:
    """uv's lock of the plan's pip part, run to its end (what lock_plan does for the pip part)."""
    with PipCompile(pip_request(plan, indexes, exclude_newer), plan) as run:
        return run.result()
