"""The Machine: what detect observes and what resolve plans for.

Plain frozen dataclasses with `to_json`/`from_json`, so a Machine can be detected on one
computer and resolved or locked on another (`gpuenv detect --json > m.json`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

OS_FAMILIES = ("linux", "windows", "macos")


class MachineError(GpuenvError, ValueError):
    """A Machine description that cannot be used (bad JSON, unknown OS, ...)."""

    exit_code = USAGE_EXIT


def conda_platform(os_family: str, arch: str) -> str:
    """The conda subdir for an OS family and CPU architecture (e.g. linux-64, osx-arm64)."""
    arch = normalize_arch(arch)
    if os_family == "linux":
        return "linux-64" if arch == "x86_64" else "linux-aarch64"
    if os_family == "windows":
        if arch != "x86_64":
            return "win-arm64"
        return "win-64"
    if os_family == "macos":
        return "osx-64" if arch == "x86_64" else "osx-arm64"
    raise MachineError(f"unknown OS family {os_family!r}; expected one of {', '.join(OS_FAMILIES)}")


def normalize_arch(arch: str) -> str:
    """Fold the many spellings of a CPU architecture into x86_64 or aarch64."""
    a = arch.strip().lower()
    if a in ("x86_64", "amd64", "x64", "x86-64"):
        return "x86_64"
    if a in ("aarch64", "arm64", "armv8", "armv8l"):
        return "aarch64"
    raise MachineError(f"unknown CPU architecture {arch!r}; expected x86_64 or aarch64/arm64")


@dataclass(frozen=True)
class OSInfo:
    """The operating system: its family, name and version, and whether it is Linux under WSL2."""

    family: str  # linux | windows | macos
    name: str = ""  # e.g. "Windows 10", "Ubuntu 22.04.4 LTS", "macOS 14.5"
    version: str = ""  # e.g. "10.0.19045", "22.04", "14.5"
    wsl: bool = False  # Linux under WSL2: the driver is the Windows host's
    windows_build: Optional[int] = None  # the Windows build (native, or WSL2's host when known)

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "name": self.name,
            "version": self.version,
            "wsl": self.wsl,
            "windows_build": self.windows_build,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OSInfo:
        family = data.get("family")
        if family not in OS_FAMILIES:
            raise MachineError(f"os.family must be one of {', '.join(OS_FAMILIES)}, got {family!r}")
        build = data.get("windows_build")
        return cls(
            family=family,
            name=str(data.get("name") or ""),
            version=str(data.get("version") or ""),
            wsl=bool(data.get("wsl", False)),
            windows_build=int(build) if build is not None else None,
        )


@dataclass(frozen=True)
class Gpu:
    """One NVIDIA GPU: its name, compute capability and PCI id, and which probe said so."""

    name: str
    compute_capability: Optional[str]  # "X.Y", or None when no source could tell
    memory_mib: Optional[int] = None
    pci_id: Optional[str] = None  # "10de:1347" (vendor:device), lower-case hex
    source: str = ""  # which probe (and knowledge-base lookup) gave these facts
    index: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "compute_capability": self.compute_capability,
            "memory_mib": self.memory_mib,
            "pci_id": self.pci_id,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Gpu:
        if not data.get("name"):
            raise MachineError("every GPU needs a name")
        cc = data.get("compute_capability")
        if cc is not None:
            cc = parse_compute_capability(str(cc))
        mem = data.get("memory_mib")
        return cls(
            name=str(data["name"]),
            compute_capability=cc,
            memory_mib=int(mem) if mem is not None else None,
            pci_id=data.get("pci_id"),
            source=str(data.get("source") or ""),
            index=int(data.get("index", 0)),
        )


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver: its version and the newest CUDA it supports."""

    version: str  # NVIDIA's form: "457.49", "535.183.01"
    cuda: Optional[str] = None  # highest CUDA version the driver supports, "12.2"

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "cuda": self.cuda}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Driver:
        version = check_driver_text(str(data.get("version") or ""))
        cuda = data.get("cuda")
        return cls(version=version, cuda=str(cuda) if cuda else None)


@dataclass(frozen=True)
class PythonInfo:
    """A Python interpreter found on the machine."""

    version: str  # "3.11.7"
    path: str
    source: str = ""  # running, py-launcher, path, uv

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "path": self.path, "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PythonInfo:
        return cls(
            version=str(data["version"]),
            path=str(data.get("path") or ""),
            source=str(data.get("source") or ""),
        )


@dataclass(frozen=True)
class Machine:
    """What detect observes and resolve plans for (`gpuenv detect --json`)."""

    os: OSInfo
    arch: str  # x86_64 | aarch64
    platform: str  # conda subdir
    glibc: Optional[str] = None
    pythons: tuple[PythonInfo, ...] = ()
    driver: Optional[Driver] = None
    gpus: tuple[Gpu, ...] = ()
    notes: tuple[str, ...] = field(default=())  # what probes could not tell, and why

    def to_json(self) -> dict[str, Any]:
        return {
            "os": self.os.to_json(),
            "arch": self.arch,
            "platform": self.platform,
            "glibc": self.glibc,
            "pythons": [p.to_json() for p in self.pythons],
            "driver": self.driver.to_json() if self.driver else None,
            "gpus": [g.to_json() for g in self.gpus],
            "notes": list(self.notes),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, data: Any) -> Machine:
        if not isinstance(data, dict):
            raise MachineError("a Machine is a JSON object (the output of `gpuenv detect --json`)")
        try:
            os_info = OSInfo.from_json(data.get("os") or {})
            arch = normalize_arch(str(data.get("arch") or ""))
            derived = conda_platform(os_info.family, arch) if arch else None
            platform = str(data.get("platform") or derived)
            if derived and platform != derived:
                raise MachineError(
                    f"platform {platform!r} contradicts os.family {os_info.family!r} and arch"
                    f" {arch!r} (which make {derived}); fix or drop one of them"
                )
            driver = Driver.from_json(data["driver"]) if data.get("driver") else None
            gpus = tuple(
                Gpu.from_json({**g, "index": g.get("index", i)})
                for i, g in enumerate(data.get("gpus") or [])
            )
            pythons = tuple(PythonInfo.from_json(p) for p in data.get("pythons") or [])
        except (KeyError, TypeError, AttributeError) as exc:
            raise MachineError(f"malformed Machine JSON: {exc}") from exc
        return cls(
            os=os_info,
            arch=arch,
            platform=platform,
            glibc=data.get("glibc"),
            pythons=pythons,
            driver=driver,
            gpus=gpus,
            notes=tuple(str(n) for n in data.get("notes") or []),
        )

    @classmethod
    def loads(cls, text: str) -> Machine:
        from gpuenv.fs import strict_json

        try:
            data = strict_json.loads(text)  # NaN, 1e5000, deep nesting: a message, not a crash
        except ValueError as exc:
            raise MachineError(f"not valid JSON: {exc}") from None
        return cls.from_json(data)


def parse_compute_capability(text: str) -> str:
    """Normalise "8.6", "86", "sm_86" to "8.6"; raise MachineError otherwise."""
    t = text.strip().lower().removeprefix("sm_").removeprefix("compute_")
    if "." in t:
        major, _, minor = t.partition(".")
    elif t.isdigit() and len(t) in (2, 3):
        major, minor = t[:-1], t[-1]
    else:
        raise MachineError(f"not a compute capability: {text!r} (expected X.Y, e.g. 8.6)")
    if not (major.isdigit() and minor.isdigit()):
        raise MachineError(f"not a compute capability: {text!r} (expected X.Y, e.g. 8.6)")
    return f"{int(major)}.{int(minor)}"


# cc_tuple and parse_driver_version are memoised: resolve compares the same few dozen compute
# capabilities and driver floors of the knowledge base thousands of times a run.
@lru_cache(maxsize=1024)
def cc_tuple(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor)


@lru_cache(maxsize=1024)
def parse_driver_version(text: str) -> tuple[int, ...]:
    """NVIDIA driver versions are dotted integers: 457.49, 535.183.01, 580.65.06."""
    parts = text.strip().split(".")
    # two or three parts: a fourth (560.94.01.02) is no NVIDIA driver, so a typing error
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise MachineError(
            f"not an NVIDIA driver version: {text!r} (expected e.g. 457.49 or 535.183.01)"
        )
    return tuple(int(p) for p in parts)


# A Jetson Linux (L4T) release as users, /etc/nv_tegra_release and JetPack 5's /proc write it:
# r36.4, R35.3.1, 35.3.1. Desktop drivers are R100 and later, L4T releases below 100.
_L4T = re.compile(r"[rR]?(\d{1,2}(?:\.\d+){0,2})")


def l4t_release(text: str) -> Optional[tuple[int, ...]]:
    """(36, 4) for r36.4 or 36.4; None for a desktop driver version (540.4.0) or anything else."""
    m = _L4T.fullmatch(text.strip())
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def check_driver_text(text: str) -> str:
    """A driver version as NVIDIA writes it (457.49, 535.183.01) or a Jetson's L4T release
    (r36.4), stripped; MachineError otherwise."""
    if l4t_release(text) is None:
        parse_driver_version(text)
    return text.strip()


def driver_at_least(have: str, floor: str) -> Optional[bool]:
    """Whether driver `have` is `floor` or newer: desktop versions compare with desktop ones,
    Jetson Linux releases with Jetson Linux releases; None when one is each (no order)."""
    mine, theirs = l4t_release(have), l4t_release(floor)
    if (mine is None) != (theirs is None):
        return None
    if mine is not None and theirs is not None:
        width = max(len(mine), len(theirs))
        return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))
    return parse_driver_version(have) >= parse_driver_version(floor)
