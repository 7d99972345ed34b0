"""Known broken beats PTX: a build the knowledge base records as failing on a GPU (a framework's
[[broken]] row with its issue threads, or the build's own broken_on) is rejected there, and a
GPU next to those a row covers, that no report covers either way, gets a warning."""

from __future__ import annotations

from typing import Optional

from gpuenv.recipes import Build, KnowledgeBase, Release
from gpuenv.recipes.model import KnownBroken
from gpuenv.resolve.rejection import Rejection, candidate_label, rejection
from gpuenv.resolve.target import Target


def known_broken(
    kb: KnowledgeBase, release: Release, build: Build, target: Target
) -> Optional[Rejection]:
    """Known broken beats PTX: the knowledge base records the build failing on one of the GPUs
    (a framework-wide [[broken]] row with its issue threads, or the build's own broken_on)."""
    for each in target.ccs:
        each_sm = f"sm_{each.replace('.', '')}"
        for row in _rows(kb, release, build):
            if each in row.compute_capabilities:
                return rejection(
                    release,
                    build,
                    "broken",
                    f"recorded as not working on {each_sm}: {row.reason}. Instead: {row.instead}",
                    None,
                    row.provenance,
                )
        if each in build.broken_on:
            return rejection(
                release,
                build,
                "broken",
                f"recorded as not working on {each_sm}: {build.provenance.note}",
                None,
                build.provenance,
            )
    return None


def broken_unknown(kb: KnowledgeBase, release: Release, build: Build, target: Target) -> list[str]:
    """A GPU next to those a [[broken]] row covers, that no report covers either way."""
    out = []
    for row in _rows(kb, release, build):
        unknown = [c for c in target.ccs if c in row.unknown_on]
        if unknown:
            reported = ", ".join(f"sm_{c.replace('.', '')}" for c in row.compute_capabilities)
            out.append(
                f"{candidate_label(release, build)} is reported broken on {reported}, and no report"
                f" says whether it runs on {', '.join('sm_' + c.replace('.', '') for c in unknown)}"
                f" ({row.provenance.source}); if it fails, use instead: {row.instead}"
            )
    return out


def _rows(kb: KnowledgeBase, release: Release, build: Build) -> list[KnownBroken]:
    framework = kb.frameworks.get(release.framework)
    if framework is None or not framework.broken:
        return []
    return [row for row in framework.broken if row.covers(release, build)]


def broken_nearby(
    kb: KnowledgeBase, release: Release, build: Build, target: Target, sm: str
) -> Optional[KnownBroken]:
    """A build with no machine code for a GPU (PTX only) of a generation where the framework's
    newer builds are recorded broken: nobody reported this one working there either. Returns
    that [[broken]] row, or None."""
    framework = kb.frameworks.get(release.framework)
    if framework is None:
        return None
    cc = f"{sm[3:-1]}.{sm[-1]}" if sm.startswith("sm_") and len(sm) >= 5 else None
    if cc is None:
        return None
    for row in framework.broken:
        covers = cc in row.compute_capabilities and build.variant in row.variants
        if covers and any(p in row.platforms for p in build.platforms):
            return row
    return None


def untried_where_newer_fail(
    kb: KnowledgeBase, release: Release, build: Build, target: Target, arch: str, sm: str
) -> Rejection | str | None:
    """Known broken is not quietly replaced by an older build nobody reported working: where
    the framework's newer builds fail on this GPU's generation (a [[broken]] row) and this one
    has no machine code for it either (PTX only), it is planned only with a warning that says
    so, and refused under --require-gpu."""
    if arch != "ptx":
        return None
    row = broken_nearby(kb, release, build, target, sm)
    if row is None:
        return None
    message = (
        f"{candidate_label(release, build)} has no machine code for {sm}, only PTX, where"
        f" {row.framework} {row.versions} is recorded as failing ({row.reason}); no report"
        f" says this older build works there. Instead: {row.instead}"
    )
    if target.require_gpu:
        return rejection(release, build, "broken", message, None, row.provenance)
    return message
