"""The knowledge base as one value: every record, and the look-ups the stages ask of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Optional

from gpuenv.machine import cc_tuple
from gpuenv.recipes.deferred import DeferredMapping, DeferredTuple, Pickled
from gpuenv.recipes.gpu_names import GpuMatch, GpuNames
from gpuenv.recipes.jetson import JetsonTable
from gpuenv.recipes.model import (
    Build,
    CudaMajor,
    CudnnRelease,
    Framework,
    FrameworkDriver,
    Generation,
    GpuRecord,
    NvidiaLibrary,
    RecipeError,
    Release,
    Toolkit,
    UnpinnedWheels,
    WslSupport,
    canonical_name,
)
from gpuenv.versions import major_minor, version_key

# The GPU records and their name tables (half the knowledge base): only naming a GPU reads them.
_GPU_TABLES = ("gpus", "names")


@dataclass
class KnowledgeBase:
    """The whole knowledge base (`recipes/`), loaded, with its GPU look-up tables."""

    root: str  # its folder (text: pathlib stays off resolve's start-up)
    frameworks: Mapping[str, Framework]  # a DeferredMapping once unpickled
    cuda_majors: dict[int, CudaMajor]
    toolkits: dict[str, Toolkit]
    generations: tuple[Generation, ...]
    cudnn: dict[str, CudnnRelease]
    gpus: tuple[GpuRecord, ...]
    digest: str
    driver_branches: tuple[int, ...] = ()  # ascending: R390, R396, ..., R580, R590, ...
    framework_drivers: tuple[FrameworkDriver, ...] = ()
    wsl: Optional[WslSupport] = None  # what CUDA in WSL2 needs of the Windows host
    # NVIDIA's CUDA library wheels that share a folder across CUDA majors (nvidia.toml)
    nvidia_libraries: tuple[NvidiaLibrary, ...] = ()
    # what builds whose own NVIDIA pins are not recorded take (nvidia.toml [[unpinned]])
    unpinned_wheels: tuple[UnpinnedWheels, ...] = ()
    # Tegra GPUs' CUDA wheels and the JetPack releases their driver strings name (jetson.toml)
    jetson: JetsonTable = field(default_factory=JetsonTable)
    # the GPU look-up tables (by PCI id, by name, by typed model name), built on load
    names: GpuNames = field(init=False, repr=False, compare=False)
    # canonical package name -> its nvidia.toml library, built on load
    _library_by_package: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.names = GpuNames(self.gpus)
        by_package: dict[str, str] = {}
        for library in self.nvidia_libraries:
            for package in library.packages:
                # the first row wins; `recipes check` reports a package in two rows
                by_package.setdefault(canonical_name(package), library.name)
        self._library_by_package = by_package

    # --- pickled in parts (gpuenv.recipes.deferred): a command unpickles what it reads ---
    def __getstate__(self) -> dict[str, object]:
        state = {k: v for k, v in self.__dict__.items() if k not in _GPU_TABLES}
        state.pop("_deferred", None)
        # together, so that the name tables hold the very records of `gpus`
        state["_gpu_tables"] = Pickled.of(tuple(getattr(self, name) for name in _GPU_TABLES))
        if not isinstance(self.frameworks, DeferredMapping):
            state["frameworks"] = DeferredMapping.of(
                {name: _releases_deferred(fw) for name, fw in self.frameworks.items()}
            )
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        state = dict(state)
        self.__dict__["_deferred"] = state.pop("_gpu_tables")
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> object:
        # called only for attributes not set: the GPU tables, unpickled on first use
        deferred = self.__dict__.get("_deferred")
        if name not in _GPU_TABLES or not isinstance(deferred, Pickled):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__.update(zip(_GPU_TABLES, deferred.load()))
        del self.__dict__["_deferred"]
        return self.__dict__[name]

    # --- NVIDIA's CUDA library wheels ------------------------------------------------------
    def library_of(self, package: str) -> Optional[str]:
        """The nvidia.toml library a package belongs to (by its PEP 503 normalised name), or
        None: packages of one library install into one folder, so at most one of them may be in
        an environment."""
        return self._library_by_package.get(canonical_name(package))

    def assumed_nvidia(self, release: Release, build: Build) -> Optional[UnpinnedWheels]:
        """The [[unpinned]] row that says which NVIDIA packages this build takes when its own
        pins are not recorded (a Linux CUDA build on its framework's own index), or None."""
        if build.pip_libs or not build.is_gpu or not build.index or not build.cuda:
            return None
        if not any(p.startswith("linux") for p in build.platforms):
            return None
        for row in self.unpinned_wheels:
            if row.framework == release.framework and version_key(release.version) >= version_key(
                row.since
            ):
                return row
        return None

    # --- GPUs: see gpuenv.recipes.gpu_names -------------------------------------------------
    def find_gpu(
        self, name: Optional[str] = None, pci_id: Optional[str] = None
    ) -> Optional[GpuRecord]:
        """The GPU by PCI device id first (unambiguous), then by name; None when unknown.

        Raises AmbiguousGpu when only a name is known and NVIDIA's tables give it to chips of
        different compute capability (GeForce GT 730 is Fermi, or Kepler)."""
        match = self.names.match_gpu(name, pci_id)
        return match.record if match else None

    def match_gpu(
        self, name: Optional[str] = None, pci_id: Optional[str] = None
    ) -> Optional[GpuMatch]:
        return self.names.match_gpu(name, pci_id)

    def match_typed_gpu(self, text: str) -> Optional[GpuMatch]:
        return self.names.match_typed_gpu(text)

    def close_gpu_names(self, text: str) -> list[str]:
        return self.names.close_gpu_names(text)

    def generation_for(self, cc: str) -> Optional[Generation]:
        for gen in self.generations:
            if cc in gen.compute_capabilities:
                return gen
        major = cc_tuple(cc)[0]
        for gen in self.generations:
            if any(cc_tuple(c)[0] == major for c in gen.compute_capabilities):
                return gen
        return None

    # --- drivers ----------------------------------------------------------------------------
    def driver_branch(self, driver: tuple[int, ...]) -> Optional[int]:
        """The branch a driver belongs to: the newest known branch not above its major number.

        Linux drivers start at their branch's number (470.256.02 is R470); Windows drivers of a
        branch run a few numbers above it (R470: 471.11 ... 474.xx, R580: 580.88 ... 58x.xx),
        so rounding the major down to a known branch reads both right."""
        fitting = [b for b in self.driver_branches if b <= driver[0]]
        return fitting[-1] if fitting else None

    def framework_driver(self, framework: str, os_key: str, cuda: str) -> Optional[FrameworkDriver]:
        major = int(cuda.split(".")[0])
        for row in self.framework_drivers:
            if row.framework == framework and row.os == os_key and row.cuda_major == major:
                return row
        return None

    # --- CUDA -------------------------------------------------------------------------------
    def toolkit(self, version: str) -> Optional[Toolkit]:
        return self.toolkits.get(major_minor(version))

    def framework(self, name: str) -> Framework:
        try:
            return self.frameworks[name]
        except KeyError:
            known = ", ".join(sorted(self.frameworks))
            raise RecipeError(f"unknown framework {name!r}; known: {known}") from None


def _releases_deferred(framework: Framework) -> Framework:
    """The framework as it is pickled: each release on its own, unpickled when first read."""
    shared = framework.archsets.values()  # many releases' builds hold one set (and its notes)
    return replace(framework, releases=DeferredTuple.of(framework.releases, shared))
