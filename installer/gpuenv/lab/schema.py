"""The lab file's schema: every key, its type, and what may go together.

Lab files arrive through shared repositories, so they are untrusted input: every table and key is
checked here before anything acts on it. An unknown key is an error that names the closest valid
one (a typo such as `compute_capabilty` must not quietly turn a GPU class into a CPU class), a
wrong type is an error that says which type, and class names are plain names because they become
file names. What needs the knowledge base (GPU names, compute capability ranges, overlaps) is
checked in `gpuenv.lab.load`.
"""

from __future__ import annotations

import difflib
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.fs.safe_paths import UnsafePathError, is_windows_device, read_bounded
from gpuenv.machine import (
    MachineError,
    check_driver_text,
    normalize_arch,
    parse_compute_capability,
)
from gpuenv.machine.describe import OS_CHOICES
from gpuenv.resolve.packages import check_package, project_name
from gpuenv.resolve.requirements import RequirementError, parse_requirements

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_LAB_FILE_BYTES = 1 << 20  # a lab file is a few dozen lines; anything this big is not one

TOP_KEYS = ("lab", "stack", "class")
LAB_KEYS = ("name", "lockfiles")
STACK_KEYS = ("requirements", "packages", "python", "jupyter")
CLASS_KEYS = (
    "name",
    "os",
    "arch",
    "gpu",
    "compute_capability",
    "driver",
    "priority",
    "fallback",
)
# What a class's lock accepts when its planned build cannot be had: nothing; builds that keep
# the GPU (the default); the CPU build too. gpuenv.lock.fallback.FALLBACK_POLICIES, written
# out: importing the lock stage would slow every lab file read (a test holds them equal)
FALLBACK_CHOICES = ("none", "gpu", "cpu")

# Class names become `<name>.lock.yml`: plain names only, no dot at either end (Windows drops a
# trailing one), and none of Windows' device names.
_CLASS_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
_PYTHON = re.compile(r"3\.[0-9]{1,2}")


class LabError(GpuenvError, ValueError):
    """The lab file is malformed, or a machine fits none of its classes."""

    exit_code = USAGE_EXIT


@dataclass(frozen=True)
class ClassSpec:
    """One `[[class]]` row as written, every field checked for type and form."""

    name: str
    os: str
    arch: str  # normalised: x86_64 | aarch64
    gpu: Optional[str]  # a GPU name; None when compute_capability is given or for a CPU class
    compute_capability: Optional[tuple[str, str]]  # (low, high), normalised X.Y
    driver: Optional[str]
    priority: int
    row: int  # 1-based position among the [[class]] rows, for messages
    fallback: str = "gpu"  # one of FALLBACK_CHOICES

    @property
    def has_gpu(self) -> bool:
        return self.gpu is not None or self.compute_capability is not None


@dataclass(frozen=True)
class LabSpec:
    name: Optional[str]
    lockfiles: str
    requirements: tuple[str, ...]
    packages: tuple[str, ...]
    python: Optional[str]
    classes: tuple[ClassSpec, ...]
    jupyter: bool = False


def read_lab_data(path: Path) -> dict[str, Any]:
    """The TOML of a lab file: a regular file of bounded size, never a pipe or a device."""
    try:
        raw = read_bounded(path, MAX_LAB_FILE_BYTES, "lab file")
    except UnsafePathError as exc:
        raise LabError(str(exc)) from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LabError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LabError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:  # tomllib recurses on nested arrays and inline tables
        raise LabError(f"{path}: not a lab file gpuenv can read (nested too deeply)") from None


def parse_lab(data: dict[str, Any], path: Path) -> LabSpec:
    """Check `data` (a lab file's TOML) against the schema; LabError names file, table and key."""
    _check_keys(data, TOP_KEYS, f"{path}: top level", "tables")
    lab = _table(data, "lab", path)
    stack = _table(data, "stack", path)
    _check_keys(lab, LAB_KEYS, f"{path}: [lab]", "keys")
    _check_keys(stack, STACK_KEYS, f"{path}: [stack]", "keys")
    where = f"{path}: [stack]"
    requirements = _string_list(stack, "requirements", where)
    if not requirements:
        raise LabError(
            f'{where} requirements is empty or missing; name the frameworks, e.g. ["torch"]'
        )
    try:
        parse_requirements(requirements)
    except RequirementError as exc:
        raise LabError(f"{where} requirements: {exc}") from exc
    packages = [_check_package(text, where) for text in _string_list(stack, "packages", where)]
    jupyter = stack.get("jupyter", False)
    if not isinstance(jupyter, bool):
        raise LabError(f"{where} jupyter: expected true or false, got {_type_name(jupyter)}")
    if jupyter and not any(project_name(p) == "ipykernel" for p in packages):
        packages.append("ipykernel")  # what a registered kernel runs
    python = _string(stack, "python", where, hint='e.g. python = "3.10", quoted')
    if python is not None and not _PYTHON.fullmatch(python):
        raise LabError(
            f'{where} python = {_show(python)}: expected a Python version "3.Y", e.g. "3.10"'
        )
    where = f"{path}: [lab]"
    name = _string(lab, "name", where)
    lockfiles = _string(lab, "lockfiles", where) or "lockfiles"
    if PurePosixPath(lockfiles).is_absolute() or PureWindowsPath(lockfiles).drive:
        raise LabError(
            f"{where} lockfiles = {_show(lockfiles)}: give a folder relative to the lab file, so the"
            " lab's lockfiles travel with it"
        )
    rows = data.get("class")
    if rows is None:
        raise LabError(f"{path}: no [[class]] rows: describe at least one kind of machine")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise LabError(
            f"{path}: `class` must be an array of tables, written [[class]] (two brackets)"
        )
    if not rows:
        raise LabError(f"{path}: no [[class]] rows: describe at least one kind of machine")
    classes = tuple(_class(row, i, path) for i, row in enumerate(rows, start=1))
    seen: dict[str, str] = {}
    for cls in classes:
        key = cls.name.lower()  # case-insensitive file systems: Pascal.lock.yml is pascal's
        if key in seen:
            raise LabError(
                f"{path}: [[class]] names {seen[key]!r} and {cls.name!r} name the same lockfile;"
                " class names must be unique (ignoring case)"
            )
        seen[key] = cls.name
    return LabSpec(name, lockfiles, tuple(requirements), tuple(packages), python, classes, jupyter)


def _class(row: dict[str, Any], index: int, path: Path) -> ClassSpec:
    raw_name = row.get("name")
    label = (
        f"{_show(raw_name)}" if isinstance(raw_name, str) and _printable(raw_name) else "no name"
    )
    where = f"{path}: [[class]] #{index} ({label})"
    _check_keys(row, CLASS_KEYS, where, "keys")
    name = _string(row, "name", where)
    if name is None:
        raise LabError(f"{where}: every class needs a name (it names the class's lockfile)")
    if not _CLASS_NAME.fullmatch(name) or is_windows_device(name):
        raise LabError(
            f"{where} name = {_show(name)}: a class name becomes a file name: use 1 to 64 letters,"
            " digits, '.', '_' or '-', starting and ending with a letter or digit"
        )
    os_name = _string(row, "os", where)
    if os_name not in OS_CHOICES:
        raise LabError(f"{where} os = {_show(os_name)}: os must be one of {', '.join(OS_CHOICES)}")
    arch_text = _string(row, "arch", where) or ("arm64" if os_name == "macos" else "x86_64")
    try:
        arch = normalize_arch(arch_text)
    except MachineError as exc:
        raise LabError(f"{where} arch: {exc}") from exc
    gpu = _string(row, "gpu", where)
    cc_text = _string(row, "compute_capability", where, hint='e.g. compute_capability = "8.6"')
    driver = _string(row, "driver", where, hint='e.g. driver = "535.183.01", quoted')
    priority = row.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise LabError(f"{where} priority: expected an integer, got {_type_name(priority)}")
    fallback = _string(row, "fallback", where, hint='e.g. fallback = "cpu", quoted') or "gpu"
    if fallback not in FALLBACK_CHOICES:
        raise LabError(
            f"{where} fallback = {_show(fallback)}: expected one of"
            f" {', '.join(repr(c) for c in FALLBACK_CHOICES)} (none: the planned builds or an"
            " error; gpu: also older builds that keep the GPU; cpu: also the CPU build)"
        )
    if gpu is not None and cc_text is not None:
        raise LabError(
            f"{where}: gpu and compute_capability exclude each other; give one"
            " (a GPU name, or a compute capability or range)"
        )
    if gpu is None and cc_text is None:
        raise LabError(
            f'{where}: say which GPU the class has: compute_capability = "8.6" (or a range'
            ' "6.0-6.1"), gpu = "GeForce 940M", or gpu = "none" for a CPU class'
        )
    cpu = gpu is not None and gpu.strip().lower() == "none"
    cc = _cc_range(cc_text, where) if cc_text is not None else None
    if cpu and driver is not None:
        raise LabError(
            f'{where}: gpu = "none" with a driver: a driver floor applies only to GPU classes;'
            " drop driver, or name the GPU"
        )
    if not cpu and os_name == "macos":
        raise LabError(f"{where}: a macos class cannot have an NVIDIA GPU (no CUDA on macOS)")
    if not cpu and driver is None:
        raise LabError(
            f'{where}: a GPU class needs its driver floor (driver = "535.183.01"), the oldest'
            " driver installed on its machines"
        )
    if driver is not None:
        try:
            check_driver_text(driver)  # or a Jetson class's Jetson Linux release, r36.4
        except MachineError as exc:
            raise LabError(f"{where} driver: {exc}") from exc
    return ClassSpec(
        name=name,
        os=os_name,
        arch=arch,
        gpu=None if cpu else gpu,
        compute_capability=cc,
        driver=driver,
        priority=priority,
        row=index,
        fallback=fallback,
    )


def _cc_range(text: str, where: str) -> tuple[str, str]:
    low, dash, high = text.partition("-")
    try:
        lo = parse_compute_capability(low)
        hi = parse_compute_capability(high) if dash else lo
    except MachineError as exc:
        raise LabError(f'{where} compute_capability: {exc}; or a range "6.0-6.1"') from exc
    if tuple(map(int, lo.split("."))) > tuple(map(int, hi.split("."))):
        raise LabError(
            f"{where} compute_capability = {_show(text)}: the range runs backwards; write {hi}-{lo}"
        )
    return lo, hi


def _check_package(text: str, where: str) -> str:
    """The command line's rule (gpuenv.resolve.packages.check_package), in a lab file's words."""
    try:
        return check_package(text)
    except RequirementError as exc:
        raise LabError(f"{where} packages: {exc}") from None


def _table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise LabError(f"{path}: `{key}` must be a table, written [{key}]; got {_type_name(value)}")
    return value


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], where: str, what: str) -> None:
    for key in table:
        if key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        shown = _show(key) if _printable(str(key)) else "with control characters"
        raise LabError(
            f"{where}: unknown key {shown}{guess} (the {what} here: {', '.join(allowed)})"
        )


def _string(table: dict[str, Any], key: str, where: str, *, hint: str = "") -> Optional[str]:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        extra = f" ({hint})" if hint else ""
        raise LabError(f"{where} {key}: expected a string, got {_type_name(value)}{extra}")
    if not value.strip():
        raise LabError(f"{where} {key} is empty; leave the key out instead")
    if not _printable(value):
        raise LabError(f"{where} {key}: contains a control character ({_show(value)})")
    return value.strip()


def _string_list(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key)
    if value is None:
        return []
    example = '["torch", "jax"]' if key == "requirements" else '["jupyterlab"]'
    if not isinstance(value, list):
        raise LabError(
            f"{where} {key}: expected a list of strings such as {example}, got {_type_name(value)}"
        )
    out = []
    for i, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise LabError(
                f"{where} {key}: item {i} is {_type_name(item)}; expected a list of strings"
                f" such as {example}"
            )
        if not item.strip() or not _printable(item):
            raise LabError(
                f"{where} {key}: item {i} ({_show(item)}) is empty or has control characters"
            )
        out.append(item.strip())
    return out


def _show(value: object, limit: int = 60) -> str:
    """A value as messages quote it: repr, cut short (a crafted file may hold a huge string)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _printable(text: str) -> bool:
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co") for ch in text)


def _type_name(value: object) -> str:
    from gpuenv.fs.type_names import type_name

    return type_name(value, mapping="a table", show=True)
