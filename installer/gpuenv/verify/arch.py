"""Small pure helpers over probe facts: architecture coverage, cuDNN and version numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from packaging.version import InvalidVersion, Version

from gpuenv.recipes.archs import coverage, from_arch_list


def arch_coverage(arch_list: Sequence[str], cc: str) -> Optional[str]:
    """'sass', 'ptx' or None (gpuenv.recipes.archs' rule) for an arch list as torch reports it."""
    sass, ptx = from_arch_list(arch_list)
    return coverage(sass, ptx, cc)


def cudnn_text(raw: object) -> Optional[str]:
    """torch.backends.cudnn.version(): 8907 -> '8.9.7' (v8: M*1000+m*100+p); 90100 -> '9.1.0'."""
    if not isinstance(raw, int) or raw <= 0:
        return None
    if raw < 10000:
        return f"{raw // 1000}.{raw % 1000 // 100}.{raw % 100}"
    return f"{raw // 10000}.{raw % 10000 // 100}.{raw % 100}"


def same_release(found: str, expected: str) -> bool:
    """'2.7.1+cu118' matches '2.7.1'; '12.6' matches '12.6.3' on the parts both give."""
    try:
        return (
            Version(found).release[: len(Version(expected).release)] == Version(expected).release
            or Version(found).public == Version(expected).public
        )
    except InvalidVersion:
        return found.split("+")[0] == expected.split("+")[0]


def prefix_match(found: str, expected: str) -> bool:
    """Compare dotted versions on the components both have: '12.3' ~ '12', '9' ~ '9.1.0'."""
    f = [p for p in found.split(".") if p]
    e = [p for p in expected.split(".") if p]
    n = min(len(f), len(e))
    return n > 0 and f[:n] == e[:n]
