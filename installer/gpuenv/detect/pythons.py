"""Python interpreters present: the running one, `py -0p`, python3.X on PATH, uv's and pyenv's.

Fast on purpose (`detect` must answer in well under a second): versions come from file and
folder names (python3.11, cpython-3.12.4-linux-x86_64-gnu, ~/.pyenv/versions/3.10.13); no
interpreter is started per candidate. uv-managed and pyenv Pythons are read from their folders
rather than from `uv python list`, which inspects every interpreter on PATH and costs 0.6 s
(more with pyenv shims, which it cannot cache). An interpreter missed here is not lost: setup
asks `uv python find` for the one version it needs before planning around its absence.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from typing import Optional

from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import PythonInfo
from gpuenv.versions import version_key

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
    found += uv_managed(env, system)
    found += pyenv_versions(env, system)
    return dedupe(found), tuple(notes)


# cpython-3.12.4-linux-x86_64-gnu; free-threaded (3.13.0+freethreaded) and other
# implementations are not what a framework wheel is built for
_UV_FOLDER = re.compile(r"^cpython-((3\.\d+)\.\d+)-")
_PYENV_FOLDER = re.compile(r"^((3\.\d+)\.\d+)$")


def uv_python_dir(env: Mapping[str, str], system: str) -> str:
    """Where uv keeps the Pythons it installs (uv's documented default, or UV_PYTHON_INSTALL_DIR)."""
    if env.get("UV_PYTHON_INSTALL_DIR"):
        return env["UV_PYTHON_INSTALL_DIR"]
    if system == "Windows":
        appdata = env.get("APPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Roaming")
        return os.path.join(appdata, "uv", "data", "python")
    data = env.get("XDG_DATA_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(data, "uv", "python")


def _interpreters_in(
    root: str, folder: re.Pattern[str], system: str, source: str
) -> list[PythonInfo]:
    """Interpreters in a folder of installs named by version, newest first."""
    try:
        names = os.listdir(root)
    except OSError:
        return []
    out = []
    for name in names:
        m = folder.match(name)
        if not m:
            continue
        version, minor = m.group(1), m.group(2)
        if system == "Windows":
            exe = os.path.join(root, name, "python.exe")
        else:
            exe = os.path.join(root, name, "bin", f"python{minor}")
        if os.path.isfile(exe):
            out.append(PythonInfo(version, exe, source))
    return sorted(out, key=lambda p: version_key(p.version), reverse=True)


def uv_managed(env: Mapping[str, str], system: str) -> list[PythonInfo]:
    return _interpreters_in(uv_python_dir(env, system), _UV_FOLDER, system, "uv")


def pyenv_versions(env: Mapping[str, str], system: str) -> list[PythonInfo]:
    root = env.get("PYENV_ROOT") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".pyenv"
    )
    return _interpreters_in(os.path.join(root, "versions"), _PYENV_FOLDER, system, "pyenv")
