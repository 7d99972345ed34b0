"""What a draft is made of: the builds found on the indexes and the facts read from them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

# index URL, project -> {file name: absolute URL}
Lister = Callable[[str, str], dict[str, str]]
# URL -> bytes of the whole (small) file, or None when absent
Getter = Callable[[str], Optional[bytes]]

PLATFORM_ORDER = ("linux-64", "linux-aarch64", "win-64", "osx-arm64", "osx-64")
# CUDA 13 wheels dropped the -cuXY suffix (nvidia-cublas, nvidia-cuda-runtime)
CUDA_LIB = re.compile(r"^nvidia-[a-z0-9-]+", re.I)


class DraftError(GpuenvError, ValueError):
    """Nothing to draft (unknown framework, no such release on the indexes)."""

    exit_code = USAGE_EXIT


@dataclass
class Build:
    variant: str
    local: str
    index: Optional[str]  # None: the default index
    platforms: set[str] = field(default_factory=set)
    pythons: dict[str, set[str]] = field(default_factory=dict)
    sample: dict[str, tuple[str, str]] = field(default_factory=dict)  # platform -> (name, url)


@dataclass(frozen=True)
class Facts:
    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    pip_libs: tuple[str, ...] = ()
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
