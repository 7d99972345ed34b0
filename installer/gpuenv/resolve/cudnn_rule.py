"""The cuDNN rule: a build's own cuDNN must have kernels for the GPU, and an open cuDNN range
is capped below the first release that dropped it (companion pins). Pure over the knowledge
base; gpuenv.resolve.gpu_rules turns its answer into a rejection or pins with reasons."""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from gpuenv.machine import cc_tuple
from gpuenv.recipes import Build, CudnnRelease, KnowledgeBase, Sourced, major_minor
from gpuenv.resolve.requirements import Pin, parse_pin
from gpuenv.resolve.target import Target


def check_cudnn(
    kb: KnowledgeBase, target: Target, build: Build
) -> tuple[str, Sourced] | list[tuple[str, CudnnRelease]]:
    """A message when the build's own cuDNN lacks kernels for the GPU; else companion pins.

    Pinned cuDNN (torch's ==, TensorFlow's tested version) is checked directly. Open ranges
    (`nvidia-cudnn-cu12>=9.8,<10`) are capped below the first release that dropped the GPU.
    """
    assert target.cc is not None
    cc = cc_tuple(target.cc)
    if build.cudnn:
        release = kb.cudnn.get(major_minor(build.cudnn))
        if (
            release
            and release.min_compute_capability
            and cc < cc_tuple(release.min_compute_capability)
        ):
            return (
                f"its cuDNN {build.cudnn} has no kernels below compute capability"
                f" {release.min_compute_capability}",
                release.provenance,
            )
    pins: list[tuple[str, CudnnRelease]] = []
    for text in build.pip_libs:
        req = parse_pin(text)
        if not req.name.startswith("nvidia-cudnn-cu"):
            continue
        first_bad = first_cudnn_without(kb, cc, req)
        if first_bad is None:
            continue
        if any(s.operator == "==" for s in req.specifier):
            return (
                f"its cuDNN ({text}) has no kernels for compute capability {target.cc}",
                first_bad.provenance,
            )
        pins.append((f"{req.name}<{first_bad.version}", first_bad))
    return pins


def first_cudnn_without(kb: KnowledgeBase, cc: tuple[int, int], req: Pin) -> Optional[CudnnRelease]:
    """The oldest cuDNN release the requirement admits that has no kernels for cc."""
    lacking = [
        release
        for release in kb.cudnn.values()
        if release.min_compute_capability and cc < cc_tuple(release.min_compute_capability)
    ]
    # sorted after filtering: usually none lack kernels, and resolve asks once per CUDA build
    for release in sorted(lacking, key=lambda r: Version(r.version)):
        # any version of this major.minor line admitted by the requirement?
        probe = [Version(release.version + ".0"), Version(release.version + ".999")]
        if any(req.specifier.contains(v, prereleases=True) for v in probe):
            return release
    return None
