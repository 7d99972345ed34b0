"""The one rule for "does code compiled for these architectures run on this GPU?"

SASS (machine code) for sm_XZ runs on compute capability X.Y when Z <= Y, same major; PTX for
compute_AB is JIT-compiled by the driver for any AB <= XY. Arch-specific targets (sm_90a,
sm_100f) run only on their own chip family and never count. resolve applies it to the knowledge
base's lists, verify to the list a framework reports at run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

from gpuenv.machine import cc_tuple


def coverage(sass: Iterable[str], ptx: Iterable[str], cc: str) -> Optional[str]:
    """'sass', 'ptx' or None for "X.Y" lists (an "a"/"f" suffix marks arch-specific targets)."""
    major, minor = cc_tuple(cc)
    for target in sass:
        if target.endswith(("a", "f")):
            continue
        t_major, t_minor = cc_tuple(target)
        if t_major == major and t_minor <= minor:
            return "sass"
    for target in ptx:
        if not target.endswith(("a", "f")) and cc_tuple(target) <= (major, minor):
            return "ptx"
    return None


def from_arch_list(entries: Iterable[str]) -> tuple[list[str], list[str]]:
    """torch.cuda.get_arch_list()'s ['sm_75', 'sm_90a', 'compute_90'] as ("X.Y" SASS, PTX)."""
    sass: list[str] = []
    ptx: list[str] = []
    for entry in entries:
        kind, _, digits = entry.partition("_")
        suffix = digits[-1] if digits[-1:].isalpha() else ""
        number = digits[:-1] if suffix else digits
        if not number.isdigit() or len(number) < 2:
            continue
        cc = f"{int(number[:-1])}.{number[-1]}{suffix}"
        (sass if kind == "sm" else ptx if kind == "compute" else []).append(cc)
    return sass, ptx
