"""Python interpreters present: the running one, `py -0p`, python3.X on PATH, and uv's.

Fast on purpose: versions come from file names (python3.11) or from the tools' own listings; no
interpreter is started per candidate.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import PythonInfo

MINORS = range(7, 15)  # python3.7 ... python3.14
_NAME_VERSION = re.compile(r"^python(3\.\d+)(?:\.exe)?$", re.IGNORECASE)
# `py -0p` lines: " -V:3.12 *   C:\...\python.exe"; older launchers: " -3.9-64  C:\...\python.exe"
_PY_LINE = re.compile(r"^\s*-(?:V:)?(\d+\.\d+)\S*\s+(?:\*\s+)?(\S.*?)\s*$")


def running() -> PythonInfo:
    v = sys.version_info
    return PythonInfo(f"{v.major}.{v.minor}.{v.micro}", sys.executable, "running")


def parse_py_launcher(text: str) -> list[PythonInfo]:
    out = []
    for line in text.splitlines():
        m = _PY_LINE.match(line)
        if m and (m.group(2).lower().endswith(".exe") or os.sep in m.group(2)):
            out.append(PythonInfo(m.group(1), m.group(2), "py-launcher"))
    return out


def parse_uv_list(text: str) -> list[PythonInfo]:
    """`uv python list --only-installed --output-format json`."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        raise ProbeError("uv python list: not JSON") from None
    out = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not item.get("path") or not item.get("version"):
            continue
        if str(item.get("implementation", "cpython")).lower() != "cpython":
            continue
        out.append(PythonInfo(str(item["version"]), str(item["path"]), "uv"))
    return out


def is_script(path: str) -> bool:
    """A `#!` wrapper (pyenv shim, ...): its name does not prove an interpreter is behind it."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def on_path(path_env: str) -> list[PythonInfo]:
    """python3.X on PATH, plus python3/python when they link to a python3.X; no wrapper scripts."""
    out = []
    for minor in MINORS:
        found = shutil.which(f"python3.{minor}", path=path_env)
        if found and not is_script(found):
            out.append(PythonInfo(f"3.{minor}", found, "path"))
    for name in ("python3", "python"):
        found = shutil.which(name, path=path_env)
        if found:
            m = _NAME_VERSION.match(os.path.basename(os.path.realpath(found)))
            if m and not is_script(found):
                out.append(PythonInfo(m.group(1), found, "path"))
    return out


def dedupe(pythons: Iterable[PythonInfo]) -> tuple[PythonInfo, ...]:
    """First of each resolved path wins."""
    seen: set[str] = set()
    out = []
    for p in pythons:
        try:
            key = os.path.normcase(os.path.realpath(p.path))
        except (OSError, ValueError):
            key = p.path
        if key not in seen:
            seen.add(key)
            out.append(p)
    return tuple(out)


def probe(
    timeout: float, system: str, environ: Optional[Mapping[str, str]] = None
) -> tuple[tuple[PythonInfo, ...], tuple[str, ...]]:
    """All interpreters found, and notes on listings that failed."""
    env = os.environ if environ is None else environ
    path_env = env.get("PATH", "")
    found = [running()]
    notes: list[str] = []
    if system == "Windows":
        py = shutil.which("py", path=path_env)
        if py:
            try:
                res = run([py, "-0p"], timeout=timeout)
                found += parse_py_launcher(res.stdout)
            except ProbeError as exc:
                notes.append(f"py launcher: {exc}")
    found += on_path(path_env)
    uv = shutil.which("uv", path=path_env)
    if uv:
        try:
            res = run(
                [uv, "python", "list", "--only-installed", "--output-format", "json"],
                timeout=timeout,
            )
            if res.returncode == 0:
                found += parse_uv_list(res.stdout)
            else:
                notes.append(f"uv python list failed (exit status {res.returncode})")
        except ProbeError as exc:
            notes.append(f"uv python list: {exc}")
    return dedupe(found), tuple(notes)
