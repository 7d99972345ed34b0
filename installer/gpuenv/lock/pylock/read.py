"""Read a gpuenv pylock.toml (PEP 751) as the LockedEnvironment that install and fetch use.

A lock arrives from elsewhere, so nothing in it is trusted: PEP 751's own rules first
(packaging.pylock), then gpuenv's. The file must carry gpuenv's plan ([tool.gpuenv]), Python
X.Y, and a known platform. Each package must have exactly one wheel, named by a plain file name
that matches its URL, with a sha256. No source distributions, VCS checkouts, folders or archives,
because gpuenv never builds at install time.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.pylock import Pylock, PylockValidationError
from packaging.utils import canonicalize_name

from gpuenv.fs import strict_json
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.model import LockedEnvironment, PipEntry
from gpuenv.lock.plan_fields import check_plan
from gpuenv.lock.pylock.write import ENVIRONMENTS, TOOL_FORMAT
from gpuenv.lock.targets import target_environment
from gpuenv.lock.validate import check_sha256, wheel_file_name
from gpuenv.resolve.plan import Plan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_BYTES = 16 * 1024 * 1024  # a lock of a few hundred wheels is well under 1 MiB
_NOT_WHEELS = ("sdist", "vcs", "directory", "archive")


def _fail(path: Path, message: str) -> LockfileError:
    return LockfileError(f"{path}: {message}")


def _load(raw: bytes, path: Path) -> dict[str, Any]:
    if len(raw) > MAX_BYTES:
        raise _fail(path, f"{len(raw)} bytes; a pylock.toml is far smaller (limit {MAX_BYTES})")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _fail(path, f"not a TOML file: {exc}") from exc
    except RecursionError:  # tomllib recurses on nested arrays and inline tables
        raise _fail(path, "not a pylock.toml gpuenv can read (nested too deeply)") from None
    return data


def _tool(path: Path, data: Mapping[str, Any]) -> Mapping[str, Any]:
    tool = (data.get("tool") or {}).get("gpuenv") if isinstance(data.get("tool"), dict) else None
    if not isinstance(tool, dict):
        raise _fail(
            path,
            "no [tool.gpuenv] table: this pylock.toml was not written by gpuenv. Install it with"
            " `uv pip install -r FILE` or `pip install -r FILE`, or lock with `gpuenv lock`.",
        )
    if tool.get("format") != TOOL_FORMAT:
        raise _fail(path, f"[tool.gpuenv] format {tool.get('format')!r} is not {TOOL_FORMAT!r}")
    return tool


def _plan(path: Path, tool: Mapping[str, Any]) -> Plan:
    text = tool.get("plan")
    if not isinstance(text, str):
        raise _fail(path, "[tool.gpuenv] has no plan")
    try:
        data = strict_json.loads(text)
    except ValueError as exc:
        raise _fail(path, f"[tool.gpuenv] plan is not JSON ({exc})") from None
    problem = check_plan(data)  # the conda-lock reader's own check of the same plan
    if problem:
        raise _fail(path, f"[tool.gpuenv] plan: {problem}")
    plan = Plan.from_json(data)
    if plan.platform not in ENVIRONMENTS:
        raise _fail(path, f"unknown platform {plan.platform!r}")
    if tool.get("platform") != plan.platform:
        raise _fail(path, f"[tool.gpuenv] platform {tool.get('platform')!r} is not the plan's")
    if plan.conda:
        raise _fail(path, "the plan needs conda packages, which a pylock.toml cannot hold")
    return plan


def _wheel_entry(path: Path, package: Mapping[str, Any]) -> PipEntry:
    name = package.get("name")
    version = package.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise _fail(path, "every package needs a name and a version")
    found = [k for k in _NOT_WHEELS if k in package]
    if found:
        raise _fail(path, f"{name}: a {found[0]} entry; gpuenv installs wheels only")
    wheels = package.get("wheels")
    if not isinstance(wheels, list) or len(wheels) != 1 or not isinstance(wheels[0], dict):
        raise _fail(path, f"{name}: needs exactly one wheel (gpuenv locks one per package)")
    wheel = wheels[0]
    url = wheel.get("url")
    where = f"{name}: the wheel"
    if not isinstance(url, str):
        raise _fail(path, f"{where} needs an http(s) or file URL")
    filename = wheel_file_name(url, name, where, lambda message: _fail(path, message))
    if wheel.get("name", filename) != filename:
        raise _fail(path, f"{name}: wheel name {wheel.get('name')!r} is not its URL's file")
    sha = (wheel.get("hashes") or {}).get("sha256")
    if sha is None:
        raise _fail(path, f"{name}: the wheel has no sha256 (64 lower-case hex digits)")
    check_sha256(sha, f"{name}: the wheel's hashes.sha256", lambda message: _fail(path, message))
    return PipEntry(canonicalize_name(name), version, url, sha)


def _applies(path: Path, package: Any, target: dict[str, str]) -> bool:
    """Whether a package's PEP 751 `marker` holds on the lock's one target (pip and uv skip a
    package whose marker does not; gpuenv must not install it either)."""
    marker = package.get("marker") if isinstance(package, dict) else None
    if marker is None:
        return True
    from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName

    # packaging.pylock has checked that it is a marker; evaluating it can still fail
    try:
        return Marker(str(marker)).evaluate(target)
    except (UndefinedComparison, UndefinedEnvironmentName) as exc:
        name = package.get("name")
        raise _fail(path, f"{name}: marker {marker!r:.80} cannot be evaluated: {exc}") from None


def parse_pylock(raw: bytes, path: Path) -> LockedEnvironment:
    """A pylock.toml's bytes (read bounded by the caller) as install sees a lockfile."""
    data = _load(raw, path)
    try:
        Pylock.from_dict(data)
    except PylockValidationError as exc:
        raise _fail(path, f"not a valid PEP 751 lock: {exc}") from exc
    tool = _tool(path, data)
    plan = _plan(path, tool)
    requires = data.get("requires-python")
    if requires != f"=={plan.python}.*":
        raise _fail(path, f"requires-python {requires!r} is not the plan's =={plan.python}.*")
    if data.get("environments") != [ENVIRONMENTS[plan.platform]]:
        raise _fail(path, f"environments do not name the plan's platform ({plan.platform})")
    target = target_environment(plan.platform, plan.python)
    pip = [_wheel_entry(path, p) for p in data.get("packages") or [] if _applies(path, p, target)]
    names = [p.name for p in pip]
    if len(set(names)) != len(names):
        raise _fail(path, "a package is listed twice")
    return LockedEnvironment(
        path=path,
        platform=plan.platform,
        plan=plan,
        inputs_hash=str(tool.get("inputs-hash") or ""),
        intent_hash=str(tool.get("intent-hash") or ""),
        fallback=str(tool.get("fallback") or ""),
        machine_class=tool.get("machine-class")
        if isinstance(tool.get("machine-class"), str)
        else None,
        conda=(),
        pip=tuple(sorted(pip, key=lambda p: p.name)),
        content_sha256=hashlib.sha256(raw).hexdigest(),
    )
