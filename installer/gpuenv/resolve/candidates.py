"""Every framework's candidates on the target, ranked best first, and every rejection."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from gpuenv.recipes import Build, KnowledgeBase, Release
from gpuenv.resolve.requirements import FrameworkRequirement
from gpuenv.resolve.rules import Candidate, Rejection, evaluate
from gpuenv.resolve.target import Target
from gpuenv.versions import version_key


def candidates(
    kb: KnowledgeBase,
    target: Target,
    req: FrameworkRequirement,
    rejected: list[Rejection],
    *,
    gpu: bool = True,
    cpu: bool = True,
) -> Iterator[Candidate]:
    """GPU candidates (newest release first, newest CUDA first), then one CPU candidate per
    release (newest first), then CUDA builds that would run on the CPU dragging gigabytes of
    CUDA libraries along (a last resort); each evaluated when it is asked for
    (gpuenv.resolve.ranked), the rejections met before it added to `rejected` first, newest
    first. `cpu=False` leaves the CPU candidates out (cpu_fallbacks gives them), where they
    explain nothing (cpu_explains); `gpu=False` the GPU ones."""
    on_gpu = gpu and target.wants_gpu and not req.cpu_only
    waiting: list[Candidate] = []  # CPU candidates, behind every GPU one
    heavy: list[Candidate] = []
    for release in kb.framework(req.framework).releases:  # newest first
        if on_gpu:
            for outcome in _gpu_outcomes(kb, target, req, release):
                if isinstance(outcome, Candidate):
                    yield outcome
                else:
                    rejected.append(outcome)
        if cpu:
            found: list[Candidate] = []
            _cpu_candidate(kb, target, req, release, found, heavy, rejected)
            if on_gpu:
                waiting.extend(found)
            else:  # no GPU candidate to wait for
                yield from found
    yield from waiting
    yield from heavy


def _gpu_outcomes(
    kb: KnowledgeBase, target: Target, req: FrameworkRequirement, release: Release
) -> Iterator[Candidate | Rejection]:
    """The release's CUDA builds on the target GPU, newest CUDA first: a Candidate or a
    Rejection for each, but a platform rejection that another row of the variant makes moot."""
    for build in sorted(
        (b for b in release.builds if b.is_gpu and req.accepts(b.variant, b.extra)),
        key=_cuda_order,
        reverse=True,
    ):
        outcome = evaluate(kb, target, req, release, build)
        if isinstance(outcome, Candidate) or not _published_elsewhere(
            outcome, release, build, target.platform
        ):
            yield outcome


def cpu_explains(target: Target, req: FrameworkRequirement) -> bool:
    """Whether a CPU option's rejection is kept (explains something): on a CPU plan, or where a
    build the reachable sources lack explains a lock's fallback to an older release."""
    return not target.wants_gpu or req.cpu_only or target.available is not None


def cpu_fallbacks(kb: KnowledgeBase, target: Target, req: FrameworkRequirement) -> list[Candidate]:
    """The CPU candidates candidates(cpu=False) left out, ranked as it ranks them; only where
    cpu_explains is False (their rejections are not kept)."""
    return list(candidates(kb, target, req, [], gpu=False))


def _cpu_candidate(
    kb: KnowledgeBase,
    target: Target,
    req: FrameworkRequirement,
    release: Release,
    cpu: list[Candidate],
    heavy: list[Candidate],
    rejected: list[Rejection],
) -> None:
    """The release's best way to run on the CPU, added to `cpu` or `heavy`; the rejections on
    the way that explain something, to `rejected`."""
    for build in _cpu_options(release, target.platform, req):
        outcome = evaluate(kb, target, req, release, build, on_cpu=build.is_gpu)
        if isinstance(outcome, Candidate):
            (heavy if _is_heavy_on_cpu(build) else cpu).append(outcome)
            return
        # a GPU machine's CPU fallbacks, or builds for other platforms, explain nothing,
        # except a build the sources lack: that explains a lock's fallback to an older one
        explains = not target.wants_gpu or req.cpu_only or outcome.rule == "unavailable"
        if explains and outcome.rule != "platform":
            rejected.append(outcome)


def _published_elsewhere(
    rejection: Rejection, release: Release, build: Build, platform: str
) -> bool:
    """A "not for this platform" rejection of a row whose variant another row publishes here:
    builds are recorded per platform, so this says nothing about the variant."""
    return rejection.rule == "platform" and any(
        b.variant == build.variant and platform in b.platforms for b in release.builds
    )


def _is_heavy_on_cpu(build: Build) -> bool:
    return build.is_gpu and bool(build.pip_libs) and not build.extra


def _cpu_options(release: Release, platform: str, req: FrameworkRequirement) -> list[Build]:
    """Builds that can run a release on the CPU, best first: the release's own CPU build; a
    CPU-only package (tensorflow-cpu); its default-index CUDA build when that brings no CUDA
    libraries of its own (TensorFlow's plain wheel, GPU code it will not use); a CUDA build that
    does (torch on Linux). A CPU plan uses a CPU-only build wherever one exists."""
    main = release.package or release.framework

    def rank(build: Build) -> int:
        if not build.is_gpu:
            return 0 if (build.package or main) == main else 1
        return 3 if _is_heavy_on_cpu(build) else 2

    usable = [
        b
        for b in release.builds
        if req.accepts(b.variant, b.extra)
        # a CUDA extra keeps its builds here, to be rejected with why the plan is for the CPU
        and (
            not b.is_gpu
            or bool(req.extras)
            or platform in b.pypi_default
            or platform not in b.platforms
        )
    ]
    return sorted(usable, key=rank)


def _cuda_order(build: Build) -> Version:
    return version_key(build.cuda or "0")  # a CPU build sorts below every CUDA version
