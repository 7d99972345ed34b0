"""PEP 751 export: pylock.toml for pip-only plans, validated with packaging.pylock."""

from __future__ import annotations

import json
from pathlib import Path

from packaging.pylock import Package, PackageWheel, Pylock
from packaging.utils import canonicalize_name
from packaging.version import Version

from gpuenv.atomic_write import atomic_write_text
from gpuenv.lock.pypi import PipArtifact
from gpuenv.resolve.plan import Plan


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def render_pylock(plan: Plan, artifacts: list[PipArtifact]) -> str:
    # Build through packaging first: it validates what PEP 751 requires.
    Pylock(
        lock_version=Version("1.0"),
        created_by="gpuenv",
        packages=[
            Package(
                name=canonicalize_name(a.name),
                version=Version(a.version),
                wheels=[PackageWheel(name=a.filename, url=a.url, hashes={"sha256": a.sha256})],
            )
            for a in artifacts
        ],
    )
    lines = [
        'lock-version = "1.0"',
        'created-by = "gpuenv"',
        f"requires-python = {_toml_str('==' + plan.python + '.*')}",
        "",
    ]
    for a in artifacts:
        lines += [
            "[[packages]]",
            f"name = {_toml_str(a.name)}",
            f"version = {_toml_str(a.version)}",
            f"wheels = [{{ name = {_toml_str(a.filename)}, url = {_toml_str(a.url)},"
            f" hashes = {{ sha256 = {_toml_str(a.sha256)} }} }}]",
            "",
        ]
    return "\n".join(lines)


def write_pylock(plan: Plan, artifacts: list[PipArtifact], path: Path) -> None:
    atomic_write_text(path, render_pylock(plan, artifacts))
