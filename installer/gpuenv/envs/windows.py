"""What a Windows environment needs so CUDA libraries load: DLL folders and activation scripts.

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
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_PTH, encoding="utf-8")
    return target


def write_activation_scripts(env_dir: Path, windows: bool) -> list[Path]:
    """activate.sh / .ps1 / .bat at the environment's root (conda prefixes have none)."""
    if windows:
        dirs = ["", "Library\\mingw-w64\\bin", "Library\\usr\\bin", "Library\\bin", "Scripts"]
        ps = (
            "$env:PATH = "
            + " + ".join(f'"{env_dir}\\{d};"' if d else f'"{env_dir};"' for d in dirs)
            + " + $env:PATH\n"
        )
        bat = (
            '@set "PATH='
            + ";".join(f"{env_dir}\\{d}" if d else str(env_dir) for d in dirs)
            + ';%PATH%"\n'
        )
        scripts = {"activate.ps1": ps, "activate.bat": bat}
    else:
        scripts = {
            "activate.sh": f'export PATH="{env_dir}/bin:$PATH"\nexport CONDA_PREFIX="{env_dir}"\n',
        }
    out = []
    for name, text in scripts.items():
        path = env_dir / name
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out
