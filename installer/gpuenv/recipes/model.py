"""The knowledge base's records: typed, immutable values, one per kind of row in `recipes/`."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from packaging.version import Version

from gpuenv.errors import DATA_EXIT, GpuenvError
from gpuenv.versions import in_specifier


@lru_cache(maxsize=4096)  # the resolver canonicalises the same few hundred names many times
def canonical_name(name: str) -> str:
    """A project name as PEP 503 compares it (packaging's canonicalize_name, without importing
    packaging.utils, which brings packaging.tags and subprocess onto resolve's path)."""
    return re.sub(r"[-_.]+", "-", name).lower()


PLATFORMS = ("linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64")
# A framework whose own wheel is pure Python ships its compiled code in a companion project:
# that project's wheels carry the platform tags and, on a CUDA index, the build's local label
# (jax 0.4.18 is plain; the JAX CUDA index has jaxlib 0.4.18+cuda12.cudnn89).
PLATFORM_PROJECT = {"jax": "jaxlib"}


class RecipeError(GpuenvError, ValueError):
    """The knowledge base is malformed: names the file and the row."""

    exit_code = DATA_EXIT


@dataclass(frozen=True)
class Sourced:
    """Where a knowledge-base row comes from, and whether it was checked against it."""

    source: str
    verified: bool
    note: str

    @classmethod
    def from_row(cls, row: dict[str, Any], where: str) -> Sourced:
        """A TOML row's `source` (required, never empty), `verified` and `note`."""
        if "source" not in row:
            raise RecipeError(f"{where}: missing required field 'source'")
        source = row["source"]
        if not isinstance(source, (str, int)) or isinstance(source, bool):
            raise RecipeError(f"{where}: 'source' must be a string, got {source!r}")
        if not str(source).strip():
            raise RecipeError(f"{where}: 'source' is empty; every row cites its primary source")
        verified = row.get("verified", True)
        if not isinstance(verified, bool):
            raise RecipeError(f"{where}: 'verified' must be true or false")
        return cls(source=str(source).strip(), verified=verified, note=str(row.get("note") or ""))


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
    # False where pip_libs come from an install page, not the wheel's own Requires-Dist
    # (TensorFlow 2.12/2.13: `pip install nvidia-cudnn-cu11==8.6.0.163`): the plan pins them.
    pip_libs_declared: bool = True
    # What must be installed system-wide for the build to use the GPU because no package gpuenv
    # installs provides it (TensorFlow 1.5-1.12's CUDA 9.0 and cuDNN 7: conda-forge starts at
    # CUDA 9.2, no pip wheel carries them), and why; "" when gpuenv's packages cover it
    system_libs: str = ""

    @property
    def is_gpu(self) -> bool:
        return self.cuda is not None

    @property
    def nvidia_pins_unknown(self) -> bool:
        """A CUDA build whose NVIDIA wheel requirements are not recorded: its note says
        "unknown, not none" (recipes/README.md; `recipes check` holds every Linux CUDA row
        without pip_libs to saying "bundled" or that)."""
        return self.is_gpu and not self.pip_libs and "unknown, not none" in self.provenance.note


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
    # Why no lock can hold this release (a requirement with no wheel at all in its era), or ""
    unlockable: str = ""
    # Companions locked without the era's exclude-newer date: a requirement of this release that
    # no wheel met before it (TF 2.12's jax>=0.3.15: the first jax wheel is 0.4.16)
    cutoff_exempt: tuple[str, ...] = ()
    # Companion projects' own Python lists where they differ (torchvision 0.20.1 has no cp313
    # wheel though torch 2.5.1 has): project -> platform -> Pythons
    related_python: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)


@dataclass(frozen=True)
class KnownBroken:
    """Builds that a framework's own tracker shows failing on some GPUs in practice, whatever
    their PTX promises (pip TensorFlow on sm_120): the resolver rejects them there."""

    framework: str
    versions: str  # a PEP 440 specifier over release versions: ">=2.16.1,<=2.20.0"
    variants: tuple[str, ...]  # the build variants it covers ("cuda")
    platforms: tuple[str, ...]  # the platforms of those builds (WSL2 runs linux-64's)
    compute_capabilities: tuple[str, ...]  # where the reports show the failure
    unknown_on: tuple[str, ...]  # related GPUs no report covers either way: warn, not reject
    reason: str  # what fails, in a sentence
    instead: str  # what does run there
    provenance: Sourced  # the issue threads, named as such

    def covers(self, release: Release, build: Build) -> bool:
        return (
            release.framework == self.framework
            and build.variant in self.variants
            and any(p in self.platforms for p in build.platforms)
            and in_specifier(self.versions, release.version)
        )


@dataclass(frozen=True)
class Framework:
    """A framework's releases (newest first) and its named architecture sets."""

    name: str
    releases: Sequence[Release]  # newest first: a tuple, a DeferredTuple once unpickled
    archsets: dict[str, ArchSet]
    file: str
    broken: tuple[KnownBroken, ...] = ()  # known-broken builds, with their sources


@dataclass(frozen=True)
class CudaMajor:
    """A CUDA major version and the driver it needs at least (minor-version compatibility)."""

    major: int
    min_driver_linux: str
    min_driver_windows: str
    provenance: Sourced
    # False before CUDA 11: a build needs its own toolkit's driver, never an older one of the major
    minor_version_compatible: bool = True


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
    # Where a compute capability's toolkits ended before its generation's (Kepler sm_30/sm_32:
    # CUDA 10.2; sm_35/sm_37: 11.8).
    max_cuda_by_cc: dict[str, str] = field(default_factory=dict)

    def min_driver(self, driver_os: str) -> Optional[str]:
        return self.min_driver_windows if driver_os == "windows" else self.min_driver_linux

    def max_cuda_for(self, cc: Optional[str]) -> Optional[str]:
        """The newest CUDA with code for this compute capability (the generation's, else)."""
        return self.max_cuda_by_cc.get(cc or "", self.max_cuda)


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
class WslSupport:
    """What CUDA in WSL2 needs of the Windows host (NVIDIA's CUDA on WSL user guide)."""

    min_driver_windows: str  # the first driver of the first branch that supports it
    min_compute_capability: str  # officially supported from here (Pascal)
    unofficial_from: str  # runs, "not officially supported", from here (Maxwell)
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


@dataclass(frozen=True)
class NvidiaLibrary:
    """An NVIDIA CUDA library whose pip wheels for different CUDA majors install files into one
    folder (nvidia-cudnn-cu11, -cu12 and -cu13 all write nvidia/cudnn/): at most one of its
    packages may be in one environment. Measured from the wheels' RECORD files."""

    name: str  # "cudnn"
    packages: tuple[str, ...]  # PyPI project names, canonical: ("nvidia-cudnn-cu11", ...)
    folder: str  # the folder they share: "nvidia/cudnn"
    source: str  # the wheels whose RECORD was read: "<wheel file> sha256=<hex>; ..."
    note: Optional[str] = None
    verified: bool = True


@dataclass(frozen=True)
class UnpinnedWheels:
    """What a framework's Linux CUDA builds on its own index take from NVIDIA's wheels where a
    build's own pins are not recorded: the packages (`{major}`: the build's CUDA major), not
    their versions. Enough to tell two frameworks that would put two builds of one library on
    one path; the lock's RECORD check is exact."""

    framework: str
    since: str  # the first release it holds for
    packages: tuple[str, ...]  # "nvidia-cudnn-cu{major}"
    source: str
    note: Optional[str] = None
    verified: bool = True
