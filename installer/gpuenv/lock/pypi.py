"""The PyPI part of a lock: uv resolves the plan's pip requirements for the target.

Each framework build is routed to the index that publishes it (`[tool.uv.sources]` with an
explicit index), everything else comes from the user's configured index. uv writes PEP 751
(`pylock.toml`), which names the one file per package for the target and its sha256.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlsplit

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from gpuenv.indexes import IndexConfig
from gpuenv.lock.errors import LockError, SourceUnreachableError, UnsatisfiableError
from gpuenv.lock.targets import uv_python_platform
from gpuenv.resolve.plan import Plan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

UV_TIMEOUT = 900.0
_NETWORK_HINTS = re.compile(
    r"(failed to fetch|error sending request|dns error|connection refused|timed out|"
    r"could not connect|network is unreachable|tcp connect error|failed to download)",
    re.I,
)
_URL = re.compile(r"(?:https?|file)://[^\s`'\")]+")


@dataclass(frozen=True)
class PipArtifact:
    name: str  # canonical project name
    version: str
    url: str
    sha256: str
    index: Optional[str]  # the plan's framework index it came from; None: the user's indexes

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path.rsplit("/", 1)[-1])


def find_uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError as exc:  # pragma: no cover - uv is a dependency
        raise LockError("uv is not installed; reinstall gpuenv (`pip install gpuenv`)") from exc
    return str(find_uv_bin())


@dataclass(frozen=True)
class PipLock:
    artifacts: list[PipArtifact]
    notes: tuple[str, ...] = ()
    cutoff_applied: bool = True
    uv_pylock: Optional[dict[str, Any]] = None  # uv's own PEP 751 output, parsed


# uv's words when the cut-off is what made the resolution fail
_CUTOFF_FAILED = ("filtered by `exclude-newer`", "has no publish time", "missing an upload date")


def compile_pip(
    plan: Plan,
    *,
    indexes: IndexConfig,
    exclude_newer: Optional[str],
    uv: Optional[str] = None,
) -> PipLock:
    """Resolve the plan's pip part for its platform and Python; every artifact has a sha256.

    An index that publishes no upload times (many mirrors) cannot honour `exclude_newer`, nor
    can a stack that pins something newer: the lock is then made without it, and a note says so.
    """
    requirements = [p.requirement for p in plan.pip] + list(plan.companions)
    if not requirements:
        return PipLock([])
    routed: dict[str, str] = {}  # project -> explicit index
    for req in plan.pip:
        if req.index:
            routed[canonicalize_name(Requirement(req.requirement).name)] = req.index
    with tempfile.TemporaryDirectory(prefix="gpuenv-lock-") as tmp:
        work = Path(tmp)
        (work / "pyproject.toml").write_text(_project(requirements, routed), encoding="utf-8")
        (work / "constraints.txt").write_text(
            "".join(c + "\n" for c in plan.constraints), encoding="utf-8"
        )
        out = work / "pylock.toml"
        cmd = [
            uv or find_uv(),
            "pip",
            "compile",
            str(work / "pyproject.toml"),
            "--output-file",
            str(out),
            "--format",
            "pylock.toml",
            "--python-version",
            plan.python,
            "--python-platform",
            uv_python_platform(plan.platform, plan.glibc),
            # uv looks for an interpreter of that version otherwise; any will do for a lock
            "--python",
            sys.executable,
            "--no-header",
            "--quiet",
            # never build an sdist to read its metadata: a build runs the package's code
            "--no-build",
            "--constraint",
            str(work / "constraints.txt"),
            *indexes.uv_args(),
        ]
        sources = ", ".join(indexes.all_indexes() + tuple(routed.values())) or "the default index"
        notes: tuple[str, ...] = ()
        cutoff = bool(exclude_newer)
        done = _run_uv(cmd + _cutoff_args(exclude_newer, routed), sources)
        if done.returncode != 0 and exclude_newer and any(h in done.stderr for h in _CUTOFF_FAILED):
            notes = (
                f"the dependencies could not be locked as of {exclude_newer} (the index publishes"
                " no upload times, or a pinned package is newer); locked without that cut-off,"
                " with the knowledge base's companion pins",
            )
            cutoff = False
            done = _run_uv(cmd, sources)
        if done.returncode != 0:
            raise _uv_error(done.stderr, requirements, plan)
        text = out.read_text(encoding="utf-8")
        return PipLock(_artifacts(text, routed), notes, cutoff, tomllib.loads(text))


def _cutoff_args(exclude_newer: Optional[str], routed: dict[str, str]) -> list[str]:
    if not exclude_newer:
        return []
    args = ["--exclude-newer", exclude_newer]
    # framework indexes publish no upload times; the cut-off cannot apply to them
    for project in sorted(routed):
        args += ["--exclude-newer-package", f"{project}=false"]
    return args


def _run_uv(cmd: list[str], sources: str) -> subprocess.CompletedProcess[str]:
    from gpuenv.output import log_command

    log_command(cmd)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=UV_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        raise SourceUnreachableError(
            f"uv did not finish resolving within {UV_TIMEOUT:.0f}s; an index may be unreachable"
            f" ({sources})"
        ) from exc


def _project(requirements: list[str], routed: dict[str, str]) -> str:
    lines = [
        "[project]",
        'name = "gpuenv-lock-input"',
        'version = "0"',
        f"dependencies = {json.dumps(requirements)}",
    ]
    names = {url: f"gpuenv-{i}" for i, url in enumerate(sorted(set(routed.values())))}
    for url, name in names.items():
        lines += [
            "",
            "[[tool.uv.index]]",
            f'name = "{name}"',
            f"url = {json.dumps(url)}",
            "explicit = true",
        ]
        if url.endswith(".html"):
            # a find-links page (the JAX CUDA wheels), not a PEP 503 index: uv reads it as flat
            lines.append('format = "flat"')
    if routed:
        lines += ["", "[tool.uv.sources]"]
        lines += [
            f'{project} = {{ index = "{names[url]}" }}' for project, url in sorted(routed.items())
        ]
    return "\n".join(lines) + "\n"


def _artifacts(pylock_text: str, routed: dict[str, str]) -> list[PipArtifact]:
    data = tomllib.loads(pylock_text)
    out: list[PipArtifact] = []
    for package in data.get("packages", []):
        name = canonicalize_name(package["name"])
        wheels = package.get("wheels") or []
        if not wheels:
            raise LockError(
                f"{name} {package.get('version')} has no wheel for this platform (only a source"
                " distribution); gpuenv locks wheels only, so that installs need no compiler"
            )
        if len(wheels) > 1:  # uv lists only the target's wheel; take the first if not
            wheels = sorted(wheels, key=lambda w: w["url"])
        wheel = wheels[0]
        sha = (wheel.get("hashes") or {}).get("sha256")
        if not sha:
            raise LockError(f"{name}: the index gave no sha256 for {wheel['url']}")
        out.append(PipArtifact(name, str(package["version"]), wheel["url"], sha, routed.get(name)))
    return sorted(out, key=lambda a: a.name)


# uv's words for "this package has only source distributions (for this target)"
_NO_WHEEL = (
    re.compile(r"Wheels are required for `([^`]+)`"),
    re.compile(r"Because (?:only )?([A-Za-z0-9][A-Za-z0-9._-]*)\S* has no (?:usable )?wheels"),
    re.compile(r"\b([A-Za-z0-9][A-Za-z0-9._-]*)==\S+ has no (?:usable )?wheels"),
)


def no_wheel_packages(stderr: str) -> list[str]:
    """The packages uv could not use because they publish no wheel for the target."""
    names: list[str] = []
    for pattern in _NO_WHEEL:
        for match in pattern.finditer(stderr):
            name = str(canonicalize_name(match.group(1)))
            if name not in names:
                names.append(name)
    return names


def _uv_error(stderr: str, requirements: list[str], plan: Optional[Plan] = None) -> LockError:
    text = stderr.strip()
    lines = [line for line in text.splitlines() if line.strip()]
    summary = "\n".join(lines[-12:])
    sdist_only = no_wheel_packages(text)
    if sdist_only:
        target = f" for {plan.platform}, Python {plan.python}" if plan else ""
        return LockError(
            f"no wheel of {', '.join(sdist_only)}{target}: gpuenv locks wheels only and never"
            " builds a source distribution (building runs the package's own code). Pin a version"
            " that publishes a wheel for this target, or drop the package:\n" + summary
        )
    if _NETWORK_HINTS.search(text):
        urls = sorted(set(_URL.findall(text)))
        where = ", ".join(urls[:3]) or "the package index"
        return SourceUnreachableError(f"could not reach {where}:\n{summary}")
    if "unsatisfiable" in text or "No solution found" in text:
        return UnsatisfiableError(
            "the pip requirements conflict (" + ", ".join(requirements) + "):\n" + summary
        )
    return LockError(f"uv failed:\n{summary}")
