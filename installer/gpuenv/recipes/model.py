"""The knowledge base's records: typed, immutable values, one per kind of row in `recipes/`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from packaging.version import Version

PLATFORMS = ("linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64")
# A framework whose own wheel is pure Python ships its compiled code in a companion project:
# that project's wheels carry the platform tags and, on a CUDA index, the build's local label
# (jax 0.4.18 is plain; the JAX CUDA index has jaxlib 0.4.18+cuda12.cudnn89).
PLATFORM_PROJECT = {"jax": "jaxlib"}


class RecipeError(ValueError):
    """The knowledge base is malformed: names the file and the row."""


@dataclass(frozen=True)
class Sourced:
    """Where a knowledge-base row comes from, and whether it was checked against it."""

    source: str
    verified: bool
    note: str


@dataclass(frozen=True)
class ArchSet:
    """The GPU architectures a build compiles for: SASS (machine code) and PTX."""

    name: str
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    provenance: Sourced
    # wheels whose fatbins were read and hold exactly these lists: "<wheel file> sha256=<hex>"
    measured: tuple[str, ...] = ()


@dataclass(frozen=True)
class Build:
    """One build of a release: its variant (cu118, cpu, ...), platforms, CUDA and index."""

    variant: str
    platforms: tuple[str, ...]
    cuda: Optional[str]
    cudnn: Optional[str]
    archs: Optional[ArchSet]
    index: Optional[str]
    local: str
    pypi_default: tuple[str, ...]
    package: Optional[str]
    extra: Optional[str]
    pip_libs: tuple[str, ...]
    conda_libs: tuple[str, ...]
    companions: tuple[str, ...]
    broken_on: tuple[str, ...]
    provenance: Sourced

    @property
    def is_gpu(self) -> bool:
        return self.cuda is not None


@dataclass(frozen=True)
class Release:
    """One release of a framework, with the Pythons it supports and its builds."""

    framework: str
    version: str
    released: Optional[dt.date]
    python: dict[str, tuple[str, ...]]
    companions: tuple[str, ...]
    package: Optional[str]
    related: dict[str, str]  # torchvision, torchaudio, jaxlib: companion releases of the project
    builds: tuple[Build, ...]
    builds_complete: bool  # false: only some builds could be verified; absence proves nothing
    provenance: Sourced

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)


@dataclass(frozen=True)
class Framework:
    """A framework's releases (newest first) and its named architecture sets."""

    name: str
    releases: tuple[Release, ...]  # newest first
    archsets: dict[str, ArchSet]
    file: str


@dataclass(frozen=True)
class CudaMajor:
    """A CUDA major version and the driver it needs at least (minor-version compatibility)."""

    major: int
    min_driver_linux: str
    min_driver_windows: str
    provenance: Sourced


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit release: its own driver floor and the architectures it compiles for."""

    version: str
    min_driver_linux: str
    min_driver_windows: str
    sass: tuple[str, ...]
    released: Optional[dt.date]
    provenance: Sourced


@dataclass(frozen=True)
class Generation:
    """A GPU generation: its compute capabilities and the drivers and CUDA it runs."""

    name: str
    compute_capabilities: tuple[str, ...]
    last_driver_branch: Optional[str]
    max_cuda: Optional[str]
    provenance: Sourced
    # The first driver that supports the generation at all (Blackwell: R570), per OS.
    min_driver_linux: Optional[str] = None
    min_driver_windows: Optional[str] = None

    def min_driver(self, driver_os: str) -> Optional[str]:
        return self.min_driver_windows if driver_os == "windows" else self.min_driver_linux


@dataclass(frozen=True)
class FrameworkDriver:
    """A framework's own documented driver floor for its CUDA builds on one OS (TensorFlow
    documents a Windows driver >= 528.33 for WSL2)."""

    framework: str
    os: str  # linux | windows | wsl
    cuda_major: int
    min_driver: str
    provenance: Sourced


@dataclass(frozen=True)
class CudnnRelease:
    """A cuDNN release: the CUDA majors it is built for and the GPUs it has kernels for."""

    version: str
    cuda_majors: tuple[int, ...]
    min_compute_capability: Optional[str]
    pip: tuple[str, ...]
    provenance: Sourced


@dataclass(frozen=True)
class GpuRecord:
    """One GPU model from NVIDIA's tables: names, PCI ids and compute capability."""

    name: str
    aliases: tuple[str, ...]
    pci_ids: tuple[str, ...]
    compute_capability: str
    architecture: str
    chip: str
    kind: str
    provenance: Sourced
    # False where only pci.ids names this chip so: NVIDIA's own name tables do not list it.
    confirmed_by_nvidia: bool = True


def major_minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2])
