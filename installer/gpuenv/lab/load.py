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
    priority = 0                         # optional: which of two overlapping classes wins
    fallback = "gpu"                     # optional: what a lock accepts when the planned
                                         # build cannot be had: "none", "gpu" (builds that
                                         # keep the GPU, the default) or "cpu"

A class is locked for the machine it describes: every compute capability of its range (so the
builds chosen have kernels for all of them) and its driver floor. A machine belongs to the class
whose OS, CPU, GPUs and driver it satisfies; a GPU class before the CPU one. Two classes one
machine could fit are refused when the file is read, unless their `priority` differs. The schema
itself (keys, types) is `gpuenv.lab.schema`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gpuenv.index.config import IndexConfig
from gpuenv.lab.schema import ClassSpec, LabError, parse_lab, read_lab_data
from gpuenv.machine import (
    Driver,
    Gpu,
    Machine,
    MachineError,
    OSInfo,
    cc_tuple,
    conda_platform,
    driver_at_least,
)
from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.gpu_lookup import lookup_gpu
from gpuenv.resolve.plan import PipRequirement, Plan

LAB_FILE_NAMES = ("gpuenv.toml", "lab.toml")
__all__ = ["LAB_FILE_NAMES", "Lab", "LabError", "MachineClass", "discover_lab", "load_lab"]


@dataclass(frozen=True)
class MachineClass:
    name: str
    os: str  # linux | windows | wsl | macos
    arch: str
    ccs: tuple[str, ...]  # every compute capability the class covers; () for a CPU class
    gpu_label: str  # as written: a name, a range, or "none"
    driver: Optional[str]
    priority: int = 0  # which of two overlapping classes a machine gets (see _check_overlaps)
    fallback: str = "gpu"  # what its lock accepts: none | gpu | cpu (gpuenv.lock.fallback)

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
            newer = driver_at_least(machine.driver.version, self.driver)
            if newer is None:  # a Jetson Linux release against a desktop driver, or back
                return (
                    f"it needs driver ≥ {self.driver}; this machine's driver"
                    f" {machine.driver.version} is not of that kind (a desktop driver version"
                    " or a Jetson Linux release)"
                )
            if not newer:
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
    jupyter: bool = False  # register a Jupyter kernel for environments set up from it

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
        """The class this machine gets (see _check_overlaps), and why each other does not fit."""
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
        # a GPU class before the CPU one; two GPU classes fit only when their priorities differ
        best = max(fits, key=lambda c: (c.has_gpu, c.priority))
        return best, why_not

    def class_for(self, machine: Machine) -> MachineClass:
        """The class this machine gets; a LabError that says why no class fits otherwise."""
        cls, why_not = self.match(machine)
        if cls is None:
            raise LabError(
                f"this machine fits no class of {self.path}:\n  "
                + "\n  ".join(why_not)
                + "\nAdd a class for it (os, compute_capability, driver floor), then"
                f" `gpuenv lock --lab {self.path}`."
            )
        return cls

    def committed_lockfile(self, cls: MachineClass) -> Path:
        """The class's lockfile, which must exist: a fleet installs what the lab committed and
        never locks on a host (that needs the indexes, and each host would lock on its own)."""
        path = self.lockfile(cls)
        if not path.is_file():
            raise LabError(
                f"lab class {cls.name} has no lockfile: {path} does not exist. Make it with"
                f" `gpuenv lock --lab {self.path} --class {cls.name}` and commit it"
            )
        return path


def find_lab_file(start: Path) -> Optional[Path]:
    for name in LAB_FILE_NAMES:
        candidate = start / name
        if candidate.is_file():
            return candidate
    return None


def discover_lab(
    start: Path, explicit: Optional[Path], requirements: tuple[str, ...], kb: KnowledgeBase
) -> tuple[Optional[Lab], Optional[str]]:
    """The lab setup uses, and a note when a lab file in `start` was passed over.

    `--lab FILE` is always read. A lab file merely found in the current directory is used only
    when no requirements were given: requirements on the command line say what to install, and
    an unrelated (or broken) `lab.toml` there must not stand in their way.
    """
    if explicit is not None:
        return load_lab(explicit, kb), None
    found = find_lab_file(start)
    if found is None:
        return None, None
    if requirements:
        return None, (
            f"{found.name} in this folder was not used: requirements were given on the command"
            f" line (pass --lab {found.name} to add its packages)"
        )
    try:
        return load_lab(found, kb), None
    except LabError as exc:
        raise LabError(
            f"{exc} (found as ./{found.name}; give requirements, e.g. `gpuenv setup torch`,"
            " to set up without it)"
        ) from exc


def lab_root(path: Path) -> Path:
    """The folder a lab file's lockfiles must stay in: the git checkout holding it, or, outside
    any checkout, the lab file's own folder."""
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def load_lab(path: Path, kb: KnowledgeBase) -> Lab:
    """A lab file, checked against the schema (`gpuenv.lab.schema`) and the knowledge base."""
    spec = parse_lab(read_lab_data(path), path)
    classes = tuple(_class(row, kb, path) for row in spec.classes)
    _check_overlaps(classes, path)
    try:
        lockfile_dir = (path.parent / spec.lockfiles).resolve()
        root = lab_root(path)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        raise LabError(f"{path}: [lab] lockfiles = {spec.lockfiles!r}: {exc}") from exc
    if not lockfile_dir.is_relative_to(root):
        # a lab file arrives through a shared repository: it must not make gpuenv write elsewhere
        raise LabError(
            f"{path}: [lab] lockfiles = {spec.lockfiles!r} leads to {lockfile_dir}, outside"
            f" {root} (the repository that holds the lab file); keep the lockfiles inside it"
        )
    return Lab(
        path=path,
        name=spec.name or path.stem,
        requirements=spec.requirements,
        packages=spec.packages,
        jupyter=spec.jupyter,
        python=spec.python,
        lockfile_dir=lockfile_dir,
        classes=classes,
    )


def _class(row: ClassSpec, kb: KnowledgeBase, path: Path) -> MachineClass:
    where = f"{path}: [[class]] #{row.row} ({row.name!r})"
    try:
        ccs, label = _coverage(row, kb)
    except (MachineError, ValueError, LookupError) as exc:
        key = "gpu" if row.gpu is not None else "compute_capability"
        raise LabError(f"{where} {key}: {exc}") from exc
    return MachineClass(
        row.name, row.os, row.arch, ccs, label, row.driver, row.priority, row.fallback
    )


def _coverage(row: ClassSpec, kb: KnowledgeBase) -> tuple[tuple[str, ...], str]:
    if row.gpu is not None:
        record = lookup_gpu(kb, row.gpu, typed=True)
        return (record.compute_capability,), row.gpu
    if row.compute_capability is None:
        return (), "none"
    lo, hi = row.compute_capability
    text = lo if lo == hi else f"{lo}-{hi}"
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


def _check_overlaps(classes: tuple[MachineClass, ...], path: Path) -> None:
    """Two classes one machine can fit are an error, unless `priority` says which one wins.

    A GPU class always ranks above a CPU class (the CPU class is the fallback for GPU machines
    no GPU class fits), so only two GPU classes, or two CPU classes, of one OS and platform can
    clash. Two GPU classes clash when their compute capabilities meet: a machine with a GPU in
    both, and a driver above both floors, fits both.
    """
    for i, a in enumerate(classes):
        for b in classes[i + 1 :]:
            if (a.os, a.platform) != (b.os, b.platform) or a.has_gpu != b.has_gpu:
                continue
            if not a.has_gpu:
                raise LabError(
                    f"{path}: [[class]] {a.name!r} and {b.name!r} are both CPU classes for"
                    f" {a.os} {a.platform}: every such machine fits both; keep one"
                )
            shared = [cc for cc in a.ccs if cc in b.ccs]
            if shared and a.priority == b.priority:
                raise LabError(
                    f"{path}: [[class]] {a.name!r} and {b.name!r} overlap: a {a.os} machine"
                    f" with a GPU of compute capability {', '.join(shared)} fits both; make"
                    " their compute capabilities disjoint, or give the one to prefer a higher"
                    " `priority` (an integer, default 0)"
                )


@dataclass(frozen=True)
class ClassPlan:
    plan: Plan  # what the sources publish allows
    ideal: Plan  # what resolve gives with every source reachable
    fallback: tuple[str, ...] = ()  # the builds the sources did not give, and what replaced them


def class_policy(cls: MachineClass, allow_cpu_fallback: bool = False) -> str:
    """What the class's lock accepts: its `fallback`, widened to the CPU by the command line."""
    return "cpu" if allow_cpu_fallback else cls.fallback


def class_requires_gpu(cls: MachineClass, require_gpu: bool = False) -> bool:
    """resolve's require_gpu for a class: `--require-gpu` holds the GPU classes to their GPU
    (a CPU class is a CPU class by design)."""
    return require_gpu and cls.has_gpu


def lab_class_plan(
    lab: Lab,
    class_name: str,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    *,
    allow_cpu_fallback: bool = False,
    require_gpu: bool = False,
) -> ClassPlan:
    """The class's plan from what the sources publish, and its ideal plan (all reachable). A
    fallback the class does not accept is a FallbackRefusedError (exit 5)."""
    from gpuenv.lock.availability import resolve_with_sources

    cls = lab.find_class(class_name)
    sourced = resolve_with_sources(
        cls.machine(),
        lab.requirements,
        kb,
        indexes,
        python=lab.python,
        fallback=class_policy(cls, allow_cpu_fallback),
        cpu_flag=f'fallback = "cpu" in class {cls.name!r}, or --allow-cpu-fallback',
        require_gpu=class_requires_gpu(cls, require_gpu),
    )
    return ClassPlan(
        with_packages(sourced.plan, lab.packages),
        with_packages(sourced.ideal, lab.packages),
        sourced.fallback,
    )


def with_packages(plan: Plan, packages: tuple[str, ...]) -> Plan:
    """The lab's extra packages (jupyterlab, ...) join the pip part of the plan."""
    if not packages:
        return plan
    return dataclasses.replace(plan, pip=(*plan.pip, *(PipRequirement(p) for p in packages)))
