"""The Jetson rules (recipes/jetson.toml): a Tegra GPU that runs only NVIDIA's builds for its
JetPack refuses every SBSA CUDA build, and one that runs the SBSA builds (Thor) is checked
against the CUDA its JetPack provides instead of the desktop driver floors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gpuenv.recipes import Build, Release
from gpuenv.resolve.rejection import Rejection, rejection
from gpuenv.resolve.target import Target
from gpuenv.versions import major_minor, version_key

if TYPE_CHECKING:
    from gpuenv.resolve.gpu_rules import GpuCase


def jetson_only(release: Release, build: Build, target: Target) -> Optional[Rejection]:
    """Orin, Xavier and older Jetsons: the default index's and the PyTorch index's aarch64 CUDA
    wheels are SBSA (server Arm) builds, which their JetPack's driver does not run."""
    tegra = target.tegra
    if tegra is None or tegra.soc.cuda_wheels != "jetson":
        return None
    return rejection(
        release,
        build,
        "jetson",
        f"a Jetson {tegra.soc.name} ({tegra.jetpack}) runs only NVIDIA's Jetson builds, not the"
        f" CUDA builds of the default index or the PyTorch index (their aarch64 builds are SBSA,"
        f" for Arm servers); {tegra.builds}",
        None,
        tegra.soc.provenance,
    )


def reads_jetpack(target: Target) -> bool:
    """Whether the driver rules are the JetPack's CUDA rather than the desktop floors: on a
    Jetson with a driver string, always (a Tegra driver string is never a desktop number)."""
    tegra = target.tegra
    return tegra is not None and tegra.driver_text is not None


def jetpack_cuda(case: GpuCase) -> Rejection | Optional[str]:
    """A build's CUDA against the CUDA its JetPack provides: a newer major never runs, a newer
    minor runs through minor-version compatibility, and PTX of a newer CUDA is not JIT-compiled."""
    tegra = case.target.tegra
    assert tegra is not None
    have = tegra.cuda
    if have is None:
        return case.reject(
            "driver",
            f"driver {tegra.driver_text} names no JetPack release recipes/jetson.toml records for"
            f" {tegra.soc.name}, so the CUDA it provides is not known; pass --driver with the"
            " board's Jetson Linux release (the first line of /etc/nv_tegra_release, e.g. r38.2)",
            row=tegra.soc.provenance,
        )
    row = tegra.jetpacks[0].provenance
    need, own = version_key(major_minor(case.cuda)), version_key(major_minor(have))
    if need.major > own.major:
        return case.reject(
            "driver",
            f"{tegra.jetpack} provides CUDA {have}; a CUDA {case.cuda} build needs a JetPack"
            f" with CUDA {need.major}",
            row=row,
        )
    if need <= own:
        return None
    if case.arch == "ptx":
        return case.reject(
            "driver",
            f"only PTX for {case.sm}, and JIT-compiling PTX from CUDA {case.cuda} needs CUDA"
            f" {case.cuda}'s driver; {tegra.jetpack} provides CUDA {have}",
            row=row,
        )
    return (
        f"{case.label} runs through CUDA minor-version compatibility: {tegra.jetpack} provides"
        f" CUDA {have}, older than the build's {case.cuda}"
    )
