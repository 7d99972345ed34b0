"""Lab files (`gpuenv.toml` or `lab.toml`): one stack, the lab's machine classes, their lockfiles.

    [lab]
    name = "Vision lab"
    lockfiles = "lockfiles"              # folder, relative to this file

    [stack]
    requirements = ["torch", "tensorflow"]
    packages = ["jupyterlab"]            # extra pip packages, locked with the stack
    python = "3.10"                      # optional pin

    [[class]]
    name = "pascal-linux"
    os = "linux"                         # linux | windows | wsl | macos
    arch = "x86_64"                      # default x86_64 (arm64 on macos)
    compute_capability = "6.0-6.2"       # or one "X.Y", or gpu = "GeForce 940M", or gpu = "none"
    driver = "535.183.01"                # the class's driver floor: machines need at least this

A class is locked for the machine it describes: every compute capability of its range (so the
builds chosen have kernels for all of them) and its driver floor. A machine belongs to the most
specific class whose OS, CPU, GPUs and driver it satisfies.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpuenv.describe import OS_CHOICES
from gpuenv.indexes import IndexConfig
from gpuenv.machine import (
    Driver,
    Gpu,
    Machine,
    MachineError,
    OSInfo,
    cc_tuple,
    conda_platform,
    normalize_arch,
    parse_compute_capability,
    parse_driver_version,
)
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.plan import PipRequirement, Plan
from gpuenv.resolve.target import lookup_gpu

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LAB_FILE_NAMES = ("gpuenv.toml", "lab.toml")


class LabError(ValueError):
    """The lab file is malformed, or a machine fits none of its classes."""


@dataclass(frozen=True)
class MachineClass:
    name: str
    os: str  # linux | windows | wsl | macos
    arch: str
    ccs: tuple[str, ...]  # every compute capability the class covers; () for a CPU class
    gpu_label: str  # as written: a name, a range, or "none"
    driver: Optional[str]

    @property
    def platform(self) -> str:
        return conda_platform("linux" if self.os == "wsl" else self.os, self.arch)

    @property
    def has_gpu(self) -> bool:
        return bool(self.ccs)

    def machine(self) -> Machine:
        """The machine this class is locked for: one GPU per covered compute capability."""
        gpus = tuple(
            Gpu(
                name=f"{self.name} GPU (compute capability {cc})",
                compute_capability=cc,
                source=f"lab class {self.name}",
                index=i,
            )
            for i, cc in enumerate(self.ccs)
        )
        family = "linux" if self.os == "wsl" else self.os
        return Machine(
            os=OSInfo(family=family, name=self.os, wsl=self.os == "wsl"),
            arch=self.arch,
            platform=self.platform,
            driver=Driver(self.driver) if self.driver and gpus else None,
            gpus=gpus,
        )

    def mismatch(self, machine: Machine) -> Optional[str]:
        """Why `machine` cannot use this class's lockfile, or None if it can."""
        os_name = "wsl" if machine.os.wsl else machine.os.family
        if os_name != self.os or machine.platform != self.platform:
            return (
                f"it is for {self.os} {self.platform}, this machine is {os_name} {machine.platform}"
            )
        if not self.has_gpu:
            return None
        ccs = [g.compute_capability for g in machine.gpus if g.compute_capability]
        if not ccs:
            return f"it needs a GPU of compute capability {self.gpu_label}; this machine has none"
        outside = [cc for cc in ccs if cc not in self.ccs]
        if outside:
            return f"it covers compute capability {self.gpu_label}; this machine has {', '.join(outside)}"
        if self.driver:
            if machine.driver is None:
                return f"it needs NVIDIA driver ≥ {self.driver}; this machine has none"
            if parse_driver_version(machine.driver.version) < parse_driver_version(self.driver):
                return f"it needs NVIDIA driver ≥ {self.driver}; this machine has {machine.driver.version}"
        return None


@dataclass(frozen=True)
class Lab:
    path: Path
    name: str
    requirements: tuple[str, ...]
    packages: tuple[str, ...]
    python: Optional[str]
    lockfile_dir: Path
    classes: tuple[MachineClass, ...] = field(default=())

    def lockfile(self, cls: MachineClass) -> Path:
        """<name>.conda-lock.yml (the name conda-lock and micromamba recognise), or the older
        <name>.lock.yml where that one exists already."""
        old = self.lockfile_dir / f"{cls.name}.lock.yml"
        if old.exists() or old.is_symlink():
            return old
        return self.lockfile_dir / f"{cls.name}.conda-lock.yml"

    def find_class(self, name: str) -> MachineClass:
        for cls in self.classes:
            if cls.name == name:
                return cls
        raise LabError(
            f"{self.path}: no class {name!r} (classes: {', '.join(c.name for c in self.classes)})"
        )

    def match(self, machine: Machine) -> tuple[Optional[MachineClass], list[str]]:
        """The most specific class this machine can use, and why each other class does not fit."""
        fits: list[MachineClass] = []
        why_not: list[str] = []
        for cls in self.classes:
            reason = cls.mismatch(machine)
            if reason is None:
                fits.append(cls)
            else:
                why_not.append(f"{cls.name}: {reason}")
        if not fits:
            return None, why_not
        # a GPU class before a CPU one; then the narrowest range, then the highest driver floor
        best = min(
            fits,
            key=lambda c: (
                not c.has_gpu,
                len(c.ccs),
                tuple(-p for p in parse_driver_version(c.driver)) if c.driver else (),
            ),
        )
        return best, why_not


def find_lab_file(start: Path) -> Optional[Path]:
    for name in LAB_FILE_NAMES:
        candidate = start / name
        if candidate.is_file():
            return candidate
    return None


def load_lab(path: Path, kb: KnowledgeBase) -> Lab:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabError(f"cannot read lab file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LabError(f"{path}: not valid TOML: {exc}") from exc
    lab = data.get("lab") or {}
    stack = data.get("stack") or {}
    requirements = tuple(stack.get("requirements") or ())
    if not requirements:
        raise LabError(
            f'{path}: [stack] requirements is empty; name the frameworks, e.g. ["torch"]'
        )
    classes = tuple(_class(row, kb, path) for row in data.get("class") or ())
    if not classes:
        raise LabError(f"{path}: no [[class]] rows: describe at least one kind of machine")
    names = [c.name for c in classes]
    if len(set(names)) != len(names):
        raise LabError(f"{path}: class names must be unique ({', '.join(names)})")
    return Lab(
        path=path,
        name=str(lab.get("name") or path.stem),
        requirements=requirements,
        packages=tuple(stack.get("packages") or ()),
        python=str(stack["python"]) if stack.get("python") else None,
        lockfile_dir=(path.parent / str(lab.get("lockfiles") or "lockfiles")).resolve(),
        classes=classes,
    )


def _class(row: dict[str, Any], kb: KnowledgeBase, path: Path) -> MachineClass:
    name = str(row.get("name") or "")
    where = f"{path} class {name or '?'}"
    if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise LabError(f"{where}: every class needs a name of letters, digits, '-', '_', '.'")
    os_name = str(row.get("os") or "")
    if os_name not in OS_CHOICES:
        raise LabError(f"{where}: os must be one of {', '.join(OS_CHOICES)}")
    try:
        arch = normalize_arch(str(row.get("arch") or ("arm64" if os_name == "macos" else "x86_64")))
        ccs, label = _coverage(row, kb)
        driver = str(row["driver"]) if row.get("driver") else None
        if driver:
            parse_driver_version(driver)
    except (MachineError, ValueError, LookupError) as exc:
        raise LabError(f"{where}: {exc}") from exc
    if ccs and not driver:
        raise LabError(f'{where}: a GPU class needs its driver floor (driver = "535.183.01")')
    return MachineClass(name, os_name, arch, ccs, label, driver)


def _coverage(row: dict[str, Any], kb: KnowledgeBase) -> tuple[tuple[str, ...], str]:
    gpu = row.get("gpu")
    cc = row.get("compute_capability")
    if gpu == "none" or (gpu is None and cc is None):
        return (), "none"
    if gpu is not None:
        record = lookup_gpu(kb, str(gpu))
        return (record.compute_capability,), str(gpu)
    text = str(cc)
    low, _, high = text.partition("-")
    lo, hi = parse_compute_capability(low), parse_compute_capability(high or low)
    known = sorted(
        {
            c
            for g in kb.generations
            for c in g.compute_capabilities
            if cc_tuple(lo) <= cc_tuple(c) <= cc_tuple(hi)
        },
        key=cc_tuple,
    )
    if not known:
        raise ValueError(f"compute capability {text} covers no known GPU")
    return tuple(known), text


def lab_class_plan(
    lab: Lab, class_name: str, kb: KnowledgeBase, indexes: IndexConfig
) -> tuple[Plan, Plan]:
    """The class's plan from what the sources publish, and its ideal plan (all reachable)."""
    from gpuenv.lock.availability import resolve_with_sources

    machine = lab.find_class(class_name).machine()
    sourced = resolve_with_sources(machine, lab.requirements, kb, indexes, python=lab.python)
    return with_packages(sourced.plan, lab.packages), with_packages(sourced.ideal, lab.packages)


def with_packages(plan: Plan, packages: tuple[str, ...]) -> Plan:
    """The lab's extra packages (jupyterlab, ...) join the pip part of the plan."""
    if not packages:
        return plan
    return dataclasses.replace(plan, pip=(*plan.pip, *(PipRequirement(p) for p in packages)))
