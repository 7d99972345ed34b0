"""PEP 751 export: pylock.toml for pip-only plans.

The packages are uv's own resolution, passed through (index, upload time, size, hashes) with
one wheel per package: the one gpuenv locked. gpuenv adds what makes the file safe to hand to
other tools: `environments` (uv and pip refuse the file on another platform before they
download anything), `requires-python`, and its plan in `[tool.gpuenv]` so that `gpuenv install`
and `gpuenv lock --check` work from this file alone. The result is checked against PEP 751 with
packaging.pylock before it is written.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from packaging.pylock import Pylock, PylockValidationError
from packaging.utils import canonicalize_name

from gpuenv.fs.atomic_write import atomic_write_text
from gpuenv.lock.errors import LockError
from gpuenv.lock.pypi import PipArtifact
from gpuenv.resolve.plan import Plan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOL_FORMAT = "1"
# The conda platform -> the PEP 508 markers of that platform (what `environments` lists).
ENVIRONMENTS = {
    "linux-64": "sys_platform == 'linux' and platform_machine == 'x86_64'",
    "linux-aarch64": "sys_platform == 'linux' and platform_machine == 'aarch64'",
    "win-64": "sys_platform == 'win32' and platform_machine == 'AMD64'",
    "win-arm64": "sys_platform == 'win32' and platform_machine == 'ARM64'",
    "osx-64": "sys_platform == 'darwin' and platform_machine == 'x86_64'",
    "osx-arm64": "sys_platform == 'darwin' and platform_machine == 'arm64'",
}
# What each package and wheel keeps from uv's file (PEP 751 keys; anything else is left out).
_PACKAGE_KEYS = ("index", "marker", "requires-python")
_WHEEL_KEYS = ("upload-time", "size")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def environment_marker(platform: str) -> str:
    try:
        return ENVIRONMENTS[platform]
    except KeyError:
        raise LockError(f"gpuenv cannot write a pylock.toml for platform {platform!r}") from None


def _value(value: Any) -> str:
    """One TOML value (the kinds PEP 751 uses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise LockError(f"cannot write {type(value).__name__} into pylock.toml")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else toml_string(key)


# TOML basic strings: `"` and `\` escaped, and every control character (U+0000-U+001F, U+007F);
# anything else is written as itself in UTF-8 (JSON's `\uD83D\uDE00` surrogate pairs are not
# TOML, and JSON leaves U+007F bare, which TOML forbids).
_TOML_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(text: str) -> str:
    """`text` as a TOML basic string; a lone surrogate (no Unicode scalar value) is refused."""
    out = []
    for char in text:
        code = ord(char)
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise LockError(f"cannot write {text!r} into pylock.toml: it holds a lone surrogate")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _uv_packages(uv_pylock: Optional[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for package in (uv_pylock or {}).get("packages") or []:
        if isinstance(package, Mapping) and isinstance(package.get("name"), str):
            out[canonicalize_name(package["name"])] = package
    return out


def _wheel(artifact: PipArtifact, uv_package: Mapping[str, Any]) -> dict[str, Any]:
    wheel: dict[str, Any] = {"name": artifact.filename, "url": artifact.url}
    for uv_wheel in uv_package.get("wheels") or []:
        if isinstance(uv_wheel, Mapping) and uv_wheel.get("url") == artifact.url:
            wheel.update({k: uv_wheel[k] for k in _WHEEL_KEYS if k in uv_wheel})
            hashes = dict(uv_wheel.get("hashes") or {})
            hashes["sha256"] = artifact.sha256
            wheel["hashes"] = hashes
            return wheel
    wheel["hashes"] = {"sha256": artifact.sha256}
    return wheel


def render_pylock(
    plan: Plan,
    artifacts: list[PipArtifact],
    tool: Mapping[str, Any],
    *,
    uv_pylock: Optional[Mapping[str, Any]] = None,
    header: str = "",
) -> str:
    """The pylock.toml text; `tool` is what goes into [tool.gpuenv] besides the plan."""
    lines = [
        'lock-version = "1.0"',
        f"environments = {_value([environment_marker(plan.platform)])}",
        f"requires-python = {_value('==' + plan.python + '.*')}",
        'created-by = "gpuenv"',
        "",
    ]
    uv = _uv_packages(uv_pylock)
    for a in sorted(artifacts, key=lambda x: x.name):
        package = uv.get(canonicalize_name(a.name), {})
        lines += ["[[packages]]", f"name = {_value(a.name)}", f"version = {_value(a.version)}"]
        lines += [f"{k} = {_value(package[k])}" for k in _PACKAGE_KEYS if k in package]
        lines += [f"wheels = [{_value(_wheel(a, package))}]", ""]
    lines.append("[tool.gpuenv]")
    meta = {"format": TOOL_FORMAT, **tool}
    lines += [f"{_key(k)} = {_value(v)}" for k, v in meta.items() if v is not None]
    lines.append(f"plan = {_value(json.dumps(plan.to_json(with_rejected=False), sort_keys=True))}")
    text = header + "\n".join(lines) + "\n"
    try:
        Pylock.from_dict(tomllib.loads(text))
    except (PylockValidationError, tomllib.TOMLDecodeError) as exc:
        raise LockError(f"gpuenv made a pylock.toml that PEP 751 rejects: {exc}") from exc
    return text


def write_pylock(path: Path, text: str) -> None:
    """Replace `path` atomically, and only if it is a regular file or absent (atomic_write)."""
    atomic_write_text(path, text)
