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


# conda platform -> (sys_platform, platform_machine, platform_system, os_name): PEP 508's values
_MARKER_VALUES = {
    "linux-64": ("linux", "x86_64", "Linux", "posix"),
    "linux-aarch64": ("linux", "aarch64", "Linux", "posix"),
    "win-64": ("win32", "AMD64", "Windows", "nt"),
    "win-arm64": ("win32", "ARM64", "Windows", "nt"),
    "osx-64": ("darwin", "x86_64", "Darwin", "posix"),
    "osx-arm64": ("darwin", "arm64", "Darwin", "posix"),
}


def target_environment(platform: str, python: str) -> dict[str, str]:
    """PEP 508 marker values of a lock's target (CPython `python` on `platform`), every key
    given so that nothing of the machine reading the lock leaks into the answer."""
    try:
        sys_platform, machine, system, os_name = _MARKER_VALUES[platform]
    except KeyError:
        raise TargetPlatformError(f"no marker values for platform {platform!r}") from None
    return {
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "os_name": os_name,
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": f"{python}.0",
        "python_version": python,
        "sys_platform": sys_platform,
        "extra": "",
    }
