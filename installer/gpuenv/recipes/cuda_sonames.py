"""Which shared libraries are CUDA's: the names the loader finds them by. doctor looks for
copies that shadow an environment's; verify tells which ones a framework loaded."""

from __future__ import annotations

import re
from typing import Optional

# The sonames of the CUDA libraries frameworks load: lib<name>.so.<major>. cuDNN 8 and 9 split
# into libcudnn_ops, _cnn, _adv, _graph, _engines_*, _heuristic (hence the optional suffix).
_CUDA_LIB = re.compile(
    r"lib(cudart|cublas|cublasLt|cudnn(?:_[a-z_]+)?|cufft|cufftw|cupti|cusparse|cusparseLt|curand"
    r"|cusolver|cusolverMg|nccl|nvrtc|nvrtc-builtins|nvJitLink)\.so\.(\d+)(?:\.[0-9.]+)?"
)


def cuda_soname(file_name: str) -> Optional[str]:
    """`libcudnn.so.8.6.0` -> `libcudnn.so.8`; None for anything that is not a CUDA library."""
    match = _CUDA_LIB.fullmatch(file_name)
    return f"lib{match.group(1)}.so.{match.group(2)}" if match else None
