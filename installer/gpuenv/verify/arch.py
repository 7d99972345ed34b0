"""Small pure helpers over probe facts: architecture coverage, cuDNN and version numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from packaging.version import InvalidVersion, Version

from gpuenv.machine import cc_tuple


def _cc(entry: str) -> Optional[tuple[int, int]]:
    digits = entry.split("_", 1)[-1]
    if not digits.isdigit() or len(digits) < 2:
        return None  # sm_90a / sm_100f: family-specific, runs only on that exact chip
    return int(digits[:-1]), int(digits[-1])


def arch_coverage(arch_list: Sequence[str], cc: str) -> Optional[str]:
    """'sass', 'ptx' or None, by gpuenv.resolve.rules.arch_support's rules, for an arch list
    as torch.cuda.get_arch_list() gives it (['sm_75', ..., 'compute_90'])."""
    device = cc_tuple(cc)
    for entry in arch_list:
        got = _cc(entry) if entry.startswith("sm_") else None
        if got and got[0] == device[0] and got[1] <= device[1]:
            return "sass"
    for entry in arch_list:
        got = _cc(entry) if entry.startswith("compute_") else None
        if got and got <= device:
            return "ptx"
    return None


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
