"""Which conda platforms (linux-64, win-64, osx-arm64, ...) a wheel's platform tag runs on.

Its own module: the lock stage's index probe, the knowledge base's online check and its
drafting all read wheel file names this way, and the probe should not import the checks.
"""

from __future__ import annotations

# macOS multi-architecture tags whose binaries include x86_64 (pip installs them on an Intel
# Mac: packaging.tags.mac_platforms lists them for x86_64). TensorFlow 1.15-2.3 ship their
# Python 3.5 wheels as macosx_10_6_intel (i386 + x86_64).
_MAC_X86_64_FAT = ("_intel", "_fat64", "_fat3", "_universal")


def platform_of(tag_platform: str) -> tuple[str, ...]:
    """The conda platforms of a wheel platform tag (manylinux_2_28_x86_64 -> linux-64);
    () for a platform gpuenv does not plan for (musllinux, 32-bit, ...)."""
    if (
        tag_platform.startswith(("manylinux", "linux", "musllinux"))
        and "musllinux" not in tag_platform
    ):
        if tag_platform.endswith("x86_64"):
            return ("linux-64",)
        if tag_platform.endswith("aarch64"):
            return ("linux-aarch64",)
    if tag_platform == "win_amd64":
        return ("win-64",)
    if tag_platform.startswith("macosx"):
        if tag_platform.endswith("universal2"):
            return ("osx-64", "osx-arm64")
        if tag_platform.endswith(("x86_64", *_MAC_X86_64_FAT)):
            return ("osx-64",)
        if tag_platform.endswith("arm64"):
            return ("osx-arm64",)
    return ()
