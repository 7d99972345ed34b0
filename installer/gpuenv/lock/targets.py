"""What a lock is for: the target platform as uv and rattler name it."""

from __future__ import annotations

from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

DEFAULT_GLIBC = "2.28"  # manylinux_2_28: what current framework wheels need anyway

_UV_TRIPLES = {
    "linux-64": "x86_64-manylinux_{glibc}",
    "linux-aarch64": "aarch64-manylinux_{glibc}",
    "win-64": "x86_64-pc-windows-msvc",
    "osx-arm64": "aarch64-apple-darwin",
    "osx-64": "x86_64-apple-darwin",
}


class TargetPlatformError(GpuenvError, ValueError):
    exit_code = USAGE_EXIT


def uv_python_platform(platform: str, glibc: Optional[str]) -> str:
    """uv's --python-platform for a conda platform (manylinux level from the target's glibc)."""
    try:
        triple = _UV_TRIPLES[platform]
    except KeyError:
        raise TargetPlatformError(f"gpuenv cannot lock for platform {platform!r}") from None
    level = (glibc or DEFAULT_GLIBC).split(".")
    return triple.format(glibc=f"2_{int(level[1])}" if len(level) > 1 else "2_28")


def virtual_packages(platform: str, glibc: Optional[str], cuda: Optional[str]) -> list[str]:
    """The conda virtual packages of the target, as "name=version" strings."""
    out: list[str] = []
    if platform.startswith("linux"):
        out += ["__unix=0", "__linux=5.10", f"__glibc={glibc or DEFAULT_GLIBC}"]
    elif platform.startswith("win"):
        out += ["__win=0"]
    elif platform.startswith("osx"):
        out += ["__unix=0", "__osx=11.0"]
    if cuda:
        out.append(f"__cuda={cuda}")
    return out
