"""Shadowed CUDA libraries: copies outside an environment that the loader would take instead of
the environment's own (a system toolkit or cuDNN on LD_LIBRARY_PATH, in ldconfig's folders).

Severity follows `gpuenv.doctor.loader`'s model. Framework wheels find their nvidia-* libraries
through DT_RUNPATH, which LD_LIBRARY_PATH beats: a copy there of another (or an unreadable)
version is a problem. The ldconfig folders come after RUNPATH, so a copy there only wins when
a library is loaded by a soname that no RUNPATH names: a warning. On the machine itself every
CUDA library outside gpuenv's store is a warning, since each would shadow the next environment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Optional

from gpuenv.doctor.findings import MACHINE, PROBLEM, WARN, Finding
from gpuenv.doctor.loader import (
    LD_LIBRARY_PATH,
    ConfProblem,
    Library,
    SearchDir,
    is_under,
    libraries_in,
    search_order,
    version_of,
)
from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

_MAX_RECORD = 16 << 20
RUN_FIX = "`gpuenv run -n {name} -- COMMAND`, which starts the environment without it"


def machine_shadowing(
    environ: Mapping[str, str], root: Path = Path("/"), store: Optional[Path] = None
) -> list[Finding]:
    """One warning per folder the loader searches that holds CUDA libraries outside the store."""
    skip = [os.path.realpath(store)] if store is not None else []
    problems: list[ConfProblem] = []
    order = search_order(environ, root, problems)
    found = [_conf_finding(problem) for problem in problems]
    for entry in order:
        if is_under(entry.path, skip):
            continue
        libs = [_with_package_version(lib) for lib in libraries_in(Path(entry.path), entry.origin)]
        if not libs:
            continue
        names = ", ".join(f"{lib.soname} ({lib.version or 'version unknown'})" for lib in libs)
        found.append(
            Finding(
                WARN,
                "outside-cuda-libraries",
                f"{entry.path} holds CUDA libraries the loader would find: {names}",
                (_why(entry), "each would shadow the copy a GPU environment brings"),
                (_fix(entry, None),),
                MACHINE,
            )
        )
    found += toolkit_variables(environ)
    return found


def _conf_finding(problem: ConfProblem) -> Finding:
    from gpuenv.output import shown

    return Finding(
        WARN,
        "loader-configuration-unreadable",
        shown(f"{problem.path} has {problem.reason}: no folder name can hold one"),
        (
            "ldconfig reads such a line only up to the NUL byte, so the folder it caches is"
            " not the one written; doctor skipped those lines and read the rest",
        ),
        (shown(f"rewrite {problem.path} without NUL bytes, then run `sudo ldconfig`"),),
        MACHINE,
    )


def toolkit_variables(environ: Mapping[str, str]) -> list[Finding]:
    """CUDA_HOME and CUDA_PATH when set and naming a toolkit with CUDA libraries."""
    out = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = environ.get(var)
        if not home:
            continue
        libs = [
            _with_package_version(lib)
            for sub in ("lib64", "lib", "targets/x86_64-linux/lib")
            for lib in libraries_in(Path(home) / sub, var)
        ]
        if not libs:
            continue
        names = ", ".join(f"{lib.soname} ({lib.version or 'version unknown'})" for lib in libs[:4])
        out.append(
            Finding(
                WARN,
                "cuda-home-set",
                f"{var}={home} names a CUDA toolkit: {names}",
                (
                    "the loader does not read it, but tools that build or compile CUDA code"
                    " take the toolkit from it (torch.utils.cpp_extension, numba, CuPy)",
                ),
                (f"unset {var} unless you build CUDA code against that toolkit",),
                MACHINE,
            )
        )
    return out


def environment_libraries(env_dir: Path) -> dict[str, Library]:
    """The CUDA libraries an environment brings: its nvidia-* wheels' `nvidia/*/lib` folders and
    a conda prefix's `lib/`, each with the version its package records."""
    out: dict[str, Library] = {}
    folders = sorted(env_dir.glob("lib/python*/site-packages/nvidia/*/lib"))
    folders += sorted(env_dir.glob("Lib/site-packages/nvidia/*/lib"))
    folders.append(env_dir / "lib")
    for folder in folders:
        for lib in libraries_in(folder, "environment"):
            out.setdefault(lib.soname, _with_package_version(lib))
    return out


def _with_package_version(lib: Library) -> Library:
    version = lib.version or package_version(Path(lib.path))
    return Library(lib.soname, lib.path, version, lib.origin)


def package_version(path: Path) -> Optional[str]:
    """The version of the package that installed `path`: an nvidia-* wheel's dist-info RECORD
    (the wheels ship `libcudart.so.12` with no fuller name), a toolkit assembled from those
    wheels (`<toolkit>/dist-info/`, as in /usr/local/cuda-13.0), or a conda package's
    conda-meta."""
    parts = path.parts
    if "site-packages" in parts:
        site = Path(*parts[: len(parts) - parts[::-1].index("site-packages")])
        relative = path.relative_to(site).as_posix()
        return _record_version(site.glob("nvidia_*.dist-info/RECORD"), lambda f: f == relative)
    prefix = path.parent.parent
    found = _record_version(
        (prefix / "dist-info").glob("nvidia_*.dist-info/RECORD"),
        lambda f: f.endswith("/lib/" + path.name),  # the wheel's own folder names differ
    )
    if found:
        return found
    relative = path.relative_to(prefix).as_posix()
    for meta in sorted((prefix / "conda-meta").glob("*.json")):
        try:
            data = json.loads(read_bounded(meta, _MAX_RECORD, "conda package record"))
        except (UnsafePathError, ValueError):
            continue
        if isinstance(data, dict) and relative in (data.get("files") or ()):
            version = data.get("version")
            return str(version) if version else None
    return None


def _record_version(records: Iterable[Path], wanted: Callable[[str], bool]) -> Optional[str]:
    """The version in the dist-info name of the first RECORD listing a file `wanted` accepts."""
    for record in sorted(records):
        try:
            text = read_bounded(record, _MAX_RECORD, "wheel RECORD").decode("utf-8", "replace")
        except UnsafePathError:
            continue
        if any(wanted(line.split(",", 1)[0]) for line in text.splitlines()):
            return record.parent.name[: -len(".dist-info")].split("-", 1)[-1]
    return None


def environment_shadowing(
    name: str, env_dir: Path, environ: Mapping[str, str], root: Path = Path("/")
) -> list[Finding]:
    """For each CUDA library the environment brings, the outside copy the loader would take
    first under `environ`, when it is another (or an unknown) version."""
    own = environment_libraries(env_dir)
    if not own:
        return []
    inside = [os.path.realpath(env_dir)]
    order = search_order(environ, root)
    found = []
    for soname, mine in sorted(own.items()):
        theirs = _first_outside(soname, order, inside)
        if theirs is None:
            continue
        entry, lib = theirs
        ld_path = entry.origin == LD_LIBRARY_PATH
        same = same_version(lib.version, mine.version)
        if same and not ld_path:
            continue
        severity = PROBLEM if ld_path and not same else WARN
        found.append(
            Finding(
                severity,
                "shadowed-library",
                f"{soname}: the loader would take {lib.path} ({lib.version or 'version unknown'})"
                f" before the environment's {mine.path} ({mine.version or 'version unknown'})"
                if ld_path
                else f"{soname}: {lib.path} ({lib.version or 'version unknown'}) can shadow the"
                f" environment's {mine.path} ({mine.version or 'version unknown'})",
                (
                    _why(entry),
                    "LD_LIBRARY_PATH is searched before the RUNPATH through which the"
                    " framework finds the environment's copy"
                    if ld_path
                    else "it wins where a library is loaded by soname without a RUNPATH to"
                    " the environment's copy",
                ),
                (_fix(entry, name),),
                name,
            )
        )
    return found


def same_version(a: Optional[str], b: Optional[str]) -> bool:
    """Whether two versions name the same release where both are known: a wheel's 9.1.0.70 and
    a file's libcudnn.so.9.1.0 agree on what the shorter one says."""
    if a is None or b is None:
        return False
    x, y = a.split("."), b.split(".")
    n = min(len(x), len(y))
    return n >= 2 and x[:n] == y[:n]


def _first_outside(
    soname: str, dirs: Iterable[SearchDir], inside: list[str]
) -> Optional[tuple[SearchDir, Library]]:
    for entry in dirs:
        candidate = Path(entry.path) / soname
        if not candidate.is_file():
            continue
        if is_under(entry.path, inside):
            return None  # the environment's own folder comes first: nothing shadows it
        return entry, Library(soname, str(candidate), _outside_version(candidate), entry.origin)
    return None


def _outside_version(path: Path) -> Optional[str]:
    return version_of(str(path)) or package_version(path)


def _why(entry: SearchDir) -> str:
    if entry.origin == LD_LIBRARY_PATH:
        return f"{entry.path} is on LD_LIBRARY_PATH"
    if entry.origin == "default":
        return f"{entry.path} is one of the loader's default folders"
    return f"{entry.origin} names {entry.path} for ldconfig's cache"


def _fix(entry: SearchDir, name: Optional[str]) -> str:
    if entry.origin == LD_LIBRARY_PATH:
        run = RUN_FIX.format(name=name or "NAME")
        return f"remove {entry.path} from LD_LIBRARY_PATH (or unset it), or use {run}"
    if entry.origin == "default":
        return (
            f"remove the CUDA packages that put these libraries into {entry.path} if nothing"
            " else needs them (the environments bring their own)"
        )
    return (
        f"remove the line naming {entry.path} from {entry.origin} and run `sudo ldconfig`, if"
        " nothing outside gpuenv's environments needs that CUDA"
    )


def clean_library_path(
    environ: Mapping[str, str], env_dir: Path
) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """`environ` with LD_LIBRARY_PATH's entries that hold CUDA libraries removed (those inside
    the environment stay), and what went: (folder, its CUDA sonames)."""
    env = dict(environ)
    if not env.get(LD_LIBRARY_PATH):
        return env, []
    inside = [os.path.realpath(env_dir)]
    kept, removed = [], []
    for raw in re.split(r"[:;]", env[LD_LIBRARY_PATH]):  # as ld.so splits it
        sonames = _sonames(raw) if raw and not is_under(raw, inside) else []
        if sonames:
            removed.append((raw, sonames))
        else:
            kept.append(raw)
    if not removed:
        return env, []
    if any(kept):
        env[LD_LIBRARY_PATH] = ":".join(kept)
    else:
        env.pop(LD_LIBRARY_PATH)
    return env, removed


def _sonames(folder: str) -> list[str]:
    return sorted({lib.soname for lib in libraries_in(Path(folder), LD_LIBRARY_PATH)})


# Windows: the DLLs frameworks load take their names from CUDA's major version
# (cudart64_110.dll, cudnn64_8.dll, cublas64_11.dll). Python 3.8+ no longer searches PATH for an
# extension module's dependencies, and PyTorch adds its own lib folder first, but TensorFlow
# 2.10 and older on native Windows, and anything loaded with the default search order, take
# them from PATH: a PATH entry holding them can shadow an environment's copies.
_WINDOWS_DLL_PREFIXES = (
    "cudart64_",
    "cudnn64_",
    "cudnn_",
    "cublas64_",
    "cublaslt64_",
    "cufft64_",
    "curand64_",
    "cusolver64_",
    "cusparse64_",
    "nvrtc64_",
)


def windows_path_shadowing(
    environ: Mapping[str, str], listdir: Callable[[str], list[str]] = os.listdir
) -> list[Finding]:
    """One warning per PATH entry holding CUDA DLLs (`listdir` is injectable for tests)."""
    path_key = next((k for k in environ if k.upper() == "PATH"), "PATH")
    found = []
    for folder in [p for p in environ.get(path_key, "").split(";") if p]:
        try:
            names = listdir(folder)
        except OSError:
            continue
        dlls = sorted(
            n
            for n in names
            if n.lower().endswith(".dll") and n.lower().startswith(_WINDOWS_DLL_PREFIXES)
        )
        if dlls:
            found.append(
                Finding(
                    WARN,
                    "outside-cuda-dlls",
                    f"{folder} on PATH holds CUDA DLLs: {', '.join(dlls)}",
                    (
                        "TensorFlow 2.10 and older, and any library loaded with Windows' default"
                        " DLL search order, take these from PATH before an environment's copies",
                    ),
                    (f"remove {folder} from PATH when you use a GPU environment",),
                    MACHINE,
                )
            )
    return found
