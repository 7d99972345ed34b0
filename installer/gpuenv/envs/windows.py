"""What a Windows environment needs so CUDA libraries load: its DLL folders.

conda prefixes get no hand-written activation scripts: `gpuenv activate` prints py-rattler's
activation for them (gpuenv.envs.activation), which also runs the packages' activate.d scripts.

Since Python 3.8, Windows no longer searches PATH for an extension module's DLLs; a `.pth` file
(its `import` lines run at start-up) adds the environment's CUDA folders with
os.add_dll_directory: conda's Library/bin and every nvidia/*/bin of the nvidia-* wheels.
"""

from __future__ import annotations

from pathlib import Path

PTH_NAME = "gpuenv_cuda_dlls.pth"

_PTH = (
    "import os, sys, glob; "
    "[os.add_dll_directory(d) for d in "
    "[os.path.join(sys.prefix, 'Library', 'bin')] + "
    "glob.glob(os.path.join(sys.prefix, 'Lib', 'site-packages', 'nvidia', '*', 'bin')) "
    "if os.path.isdir(d)] if sys.platform == 'win32' and hasattr(os, 'add_dll_directory') else None\n"
)


def write_dll_pth(env_dir: Path) -> Path:
    target = env_dir / "Lib" / "site-packages" / PTH_NAME
    from gpuenv.fs.atomic_write import atomic_write_text

    atomic_write_text(target, _PTH, root=env_dir)  # never through a link a wheel planted
    return target
