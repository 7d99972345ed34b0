"""The explanations a Plan carries: why each choice, why not the newer ones, what would help."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Optional

from packaging.version import Version

from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.requirements import FrameworkRequirement
from gpuenv.resolve.rules import Candidate, Rejection
from gpuenv.resolve.target import Target
from gpuenv.versions import version_key


def span(versions: Sequence[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def machine_reason(machine: Machine, target: Target) -> str:
    os_name = "WSL2" if target.wsl else (machine.os.name or target.os_family)
    head = f"Machine: {os_name}, {target.platform}"
    if target.no_gpu:
        return head + ", planned for the CPU (--no-gpu)"
    if target.gpu is None:
        return head + ", no NVIDIA GPU"
    gen = f", {target.generation}" if target.generation else ""
    driver = f"driver {target.driver_text}" if target.driver_text else "no NVIDIA driver"
    tables = " (Windows driver tables: WSL2 uses the host's driver)" if target.wsl else ""
    return f"{head}, {target.describe_gpu()}{gen}, {driver}{tables}"


def driver_warnings(target: Target) -> list[str]:
    branch = target.last_driver_branch
    if not (target.wants_gpu and target.driver and branch and branch.isdigit()):
        return []
    have = target.driver_branch
    if have is None or have <= int(branch):
        return []
    return [
        f"driver {target.driver_text} (R{have}) is newer than R{branch}, the last driver branch"
        f" that supports {target.generation} GPUs: {target.describe_gpu()} cannot run with it; the"
        f" plan assumes a driver of the R{branch} branch would be installed"
    ]


def choice_reason(
    req: FrameworkRequirement, cand: Candidate, rejections: list[Rejection], target: Target
) -> str:
    release, build = cand.release, cand.build
    label = f"{release.framework} {release.version} [{build.variant}]"
    if cand.on_gpu:
        what = f"the newest {req.framework} build that runs on {target.describe_gpu()}"
        if target.driver_text:
            what += f" with driver {target.driver_text}"
    elif target.wants_gpu and req.cpu_only:
        what = f"the newest {req.framework} CPU-only build"
    elif target.wants_gpu:
        what = f"the newest {req.framework} release, on the CPU (no GPU build fits)"
    else:
        what = f"the newest {req.framework} release for {target.platform} (CPU)"
    if str(req.specifier):
        what += f", within {req.specifier}"
    newer = newer_rejections(req.framework, release.version, rejections)
    if newer:
        top = most_telling(newer)
        what += f"; newer: {top.label} rejected ({top.rule}: {top.message})"
        if len(newer) > 1:
            counts = Counter(r.rule for r in newer)
            tally = ", ".join(f"{n} {rule}" for rule, n in counts.most_common())
            what += (
                f"; {len(newer)} newer candidates rejected in all ({tally}; see `gpuenv explain`)"
            )
    return f"{label}: {what}"


def choice_sources(cand: Candidate) -> str:
    """Where the rows behind a choice come from, and whether they were checked."""
    rows = [("release", cand.release.provenance), ("build", cand.build.provenance)]
    if cand.on_gpu and cand.build.archs:
        rows.append(("architectures", cand.build.archs.provenance))
    parts = []
    seen: set[str] = set()
    for what, row in rows:
        if row.source in seen:
            continue
        seen.add(row.source)
        unverified = " (unverified)" if not row.verified else ""
        parts.append(f"{what}{unverified}: {row.source}")
    return f"{cand.label}: " + "; ".join(parts)


def newer_rejections(framework: str, version: str, rejections: list[Rejection]) -> list[Rejection]:
    v = Version(version)
    return [
        r
        for r in rejections
        if r.framework == framework and r.rule != "requirement" and Version(r.version) > v
    ]


def windows_last_gpu_reason(
    kb: KnowledgeBase, cand: Candidate, rejections: list[Rejection], target: Target
) -> list[str]:
    if not (cand.on_gpu and target.os_family == "windows" and not target.wsl):
        return []
    newer = newer_rejections(cand.framework, cand.release.version, rejections)
    if any(r.rule == "platform" and "native Windows" in r.message for r in newer):
        return [
            f"{cand.framework} {cand.release.version} is the last {cand.framework} release with GPU"
            " support on native Windows; newer releases run only on the CPU there (use WSL2 for"
            " newer releases on the GPU)"
        ]
    return []


def why_not_gpu(framework: str, rejections: list[Rejection], target: Target) -> str:
    if target.gpu is None:
        return "no NVIDIA GPU found"
    gpu_rules = [
        r
        for r in rejections
        if r.framework == framework and r.rule not in ("requirement", "python")
    ]
    if not gpu_rules:
        return f"no {framework} GPU build matches the requirements"
    # A build that has kernels for this GPU but needs a newer driver is the actionable reason.
    by_driver = [r for r in gpu_rules if r.rule == "driver"]
    top = by_driver[0] if by_driver else most_telling(gpu_rules)
    return f"{top.label}: {top.message}"


def most_telling(rejections: list[Rejection]) -> Rejection:
    """The newest rejection that says more than "not published for this platform"."""
    return next((r for r in rejections if r.rule != "platform"), rejections[0])


def fixes(chosen: Sequence[Candidate], rejections: list[Rejection], target: Target) -> list[str]:
    """What would give a newer (or any) GPU stack: the smallest driver upgrade that helps and
    the one that gives the newest build, within what the GPU's generation can run; WSL2."""
    out: list[str] = []
    if target.gpu is None or target.no_gpu:
        return out
    for cand in chosen:
        mine = [r for r in rejections if r.framework == cand.framework]
        blocked = (
            newer_rejections(cand.framework, cand.release.version, rejections)
            if cand.on_gpu
            else mine
        )
        out += _driver_fixes(
            cand.framework, [r for r in blocked if r.rule == "driver" and r.needs_driver], target
        )
        if any(r.rule == "platform" and "native Windows" in r.message for r in blocked) or (
            not cand.on_gpu and target.os_family == "windows" and not target.wsl
        ):
            out.append(
                f"{cand.framework}: for newer releases on the GPU, use WSL2 (it runs the Linux"
                " builds)"
            )
    return list(dict.fromkeys(out))


def _driver_fixes(framework: str, by_driver: list[Rejection], target: Target) -> list[str]:
    if not by_driver:
        return []
    branch = target.last_driver_branch
    limit = int(branch) if branch and branch.isdigit() else None
    reachable = [
        r for r in by_driver if limit is None or target.branch_of(r.needs_driver or "0.0") <= limit
    ]
    if not reachable:
        need = min(by_driver, key=_driver_key)
        return [
            f"{framework}: newer builds need driver ≥ {need.needs_driver}, but {target.generation}"
            f" GPUs end with driver branch R{branch}; this is the newest stack this GPU can run"
        ]
    newest = reachable[0]  # rejections come newest first
    smallest = min(reachable, key=_driver_key)
    out = [f"{framework}: install NVIDIA driver ≥ {newest.needs_driver} to use {newest.label}"]
    if _driver_key(smallest) < _driver_key(newest):
        first = next(r for r in reachable if r.needs_driver == smallest.needs_driver)
        # "already": an update short of the newest; with no driver at all, any is a first one
        enough = "already allows" if target.driver is not None else "is enough for"
        out.append(f"{framework}: driver ≥ {smallest.needs_driver} {enough} {first.label}")
    return out


def _driver_key(rejection: Rejection) -> Version:
    return version_key(rejection.needs_driver or "0")


def _lacking_extra(kb: KnowledgeBase, req: FrameworkRequirement) -> Optional[str]:
    """When the versions asked for exist but none has a build of the extra asked for (jax 0.12.1
    publishes no cuda12 plugin): say that, not some other release's rejection."""
    if not req.extras:
        return None
    allowed = [r for r in kb.framework(req.framework).releases if req.allows(r.version)]
    if not allowed or any(req.accepts(b.variant, b.extra) for r in allowed for b in r.builds):
        return None
    newest = max(allowed, key=lambda r: version_key(r.version))
    builds = ", ".join(sorted({b.variant for b in newest.builds}))
    return (
        f"{req.framework} {newest.version} has no {'/'.join(req.extras)} build (its builds:"
        f" {builds}); no release in that range has one"
    )


def infeasible(
    reqs: Sequence[FrameworkRequirement],
    ranked: Sequence[Sequence[Candidate]],
    rejections: list[Rejection],
    conflicts: list[str],
    kb: Optional[KnowledgeBase] = None,
) -> str:
    lines = []
    for req, cands in zip(reqs, ranked):
        if cands:
            continue
        lacking = _lacking_extra(kb, req) if kb is not None else None
        if lacking:
            lines.append(f"{req.text}: {lacking}")
            continue
        mine = [r for r in rejections if r.framework == req.framework]
        relevant = [r for r in mine if r.rule != "requirement"] or mine
        if not relevant:
            lines.append(f"{req.text}: no release in the knowledge base")
            continue
        # A range typed for torchvision/torchaudio/jaxlib that no recorded release meets.
        ranged = [r for r in mine if r.rule == "requirement" and r.message.startswith("its ")]
        if ranged and all(r.rule in ("companion", "requirement", "platform") for r in mine):
            lines.append(
                f"{req.text}: no {req.framework} release in the knowledge base has a companion"
                f" in that range; e.g. {ranged[0].label}: {ranged[0].message}"
            )
            continue
        lines.append(
            f"{req.text}: no release runs here; e.g. {relevant[0].label}: {relevant[0].message}"
        )
    if conflicts:
        lines.append("the frameworks cannot share one environment: " + "; ".join(conflicts[:3]))
    return "no stack satisfies the requirements: " + " | ".join(lines)
