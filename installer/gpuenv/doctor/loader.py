"""Where the Linux dynamic loader would take a CUDA library from: a small model of ld.so.

The model (glibc's ld.so(8), simplified on purpose):

1. DT_RPATH of the loading object, only when it has no DT_RUNPATH (old binaries; conda-build
   can still write it).
2. LD_LIBRARY_PATH, in order.
3. DT_RUNPATH of the loading object. PyTorch, TensorFlow and JAX wheels find the nvidia-*
   wheels' libraries through a RUNPATH of `$ORIGIN/../../nvidia/*/lib`: so an
   LD_LIBRARY_PATH entry holding the same soname wins over the environment's copy.
4. The ldconfig cache, built from the folders /etc/ld.so.conf names (and the files it
   `include`s). Reading /etc/ld.so.cache's binary format is not worth it: listing the
   configured folders finds the same libraries, unless ldconfig was not rerun since.
5. The default folders (/lib, /usr/lib, and their 64-bit and multiarch variants).

Only steps 2, 4 and 5 depend on the machine rather than on the loading library, so they are
what this module lists: `search_order` returns them with what puts each folder there (the
variable, the configuration file, or "default"). Everything is injectable: `root` stands for
`/` (the configuration files and the folders they and the defaults name are read under it),
and `environ` for the process environment, so tests write their own.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gpuenv.fs.safe_paths import UnsafePathError, read_bounded
from gpuenv.recipes.cuda_sonames import cuda_soname

LD_LIBRARY_PATH = "LD_LIBRARY_PATH"
DEFAULT = "default"
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu")
# WSL2's /usr/lib/wsl/lib, which LD_LIBRARY_PATH or the cache names, is the one outside folder
# that belongs: it holds the Windows driver's libcuda, which no environment brings, and no
# soname below, so nothing here reports or removes it.

_MAX_CONF = 1 << 20  # an ld.so.conf larger than this is not one
_MAX_INCLUDES = 64  # ld.so.conf includes nest; a loop must not hang doctor


@dataclass(frozen=True)
class SearchDir:
    """One folder the loader searches, and what puts it there."""

    path: str
    origin: str  # "LD_LIBRARY_PATH", "/etc/ld.so.conf.d/cuda.conf", or "default"


@dataclass(frozen=True)
class ConfProblem:
    """A loader configuration file doctor could read only in part, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Library:
    """A CUDA library file the loader would find under its soname."""

    soname: str  # libcudart.so.12
    path: str  # the folder's entry: /usr/local/cuda/lib64/libcudart.so.12
    version: Optional[str]  # "12.4.127" where readable, None when only the major is known
    origin: str  # as SearchDir.origin


def version_of(path: str) -> Optional[str]:
    """The full version a library's file name carries (`libcudart.so.12.4.127` -> 12.4.127), or
    its link target's when the soname is a link; None when only the major is known."""
    for name in (os.path.basename(path), os.path.basename(os.path.realpath(path))):
        found = re.search(r"\.so\.(\d+(?:\.\d+)+)$", name)
        if found:
            return found.group(1)
    return None


def library_path_dirs(environ: Mapping[str, str]) -> list[SearchDir]:
    """LD_LIBRARY_PATH's entries in order; ld.so splits on ':' and ';' and an empty entry is the
    working folder, which doctor cannot predict and skips."""
    value = environ.get(LD_LIBRARY_PATH, "")
    return [SearchDir(p, LD_LIBRARY_PATH) for p in re.split(r"[:;]", value) if p]


def conf_dirs(
    root: Path, conf: str = "/etc/ld.so.conf", problems: Optional[list[ConfProblem]] = None
) -> list[SearchDir]:
    """The folders ld.so.conf names, following `include` lines (globs, relative to the file's
    folder when not absolute), each with the configuration file that names it. A line that no
    path can hold (a NUL byte) is skipped, and the file goes to `problems` when given."""
    out: list[SearchDir] = []
    seen: set[str] = set()
    _read_conf(root, conf, out, seen, problems if problems is not None else [])
    return out


def _read_conf(
    root: Path, conf: str, out: list[SearchDir], seen: set[str], problems: list[ConfProblem]
) -> None:
    if conf in seen or len(seen) >= _MAX_INCLUDES:
        return
    seen.add(conf)
    try:
        text = read_bounded(_under(root, conf), _MAX_CONF, "loader configuration")
    except UnsafePathError:
        return  # no such file, a folder, unreadable: the loader skips it too
    broken = 0
    for raw in text.decode("utf-8", "replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "\x00" in line:  # ldconfig reads such a line only up to the NUL; doctor skips it
            broken += 1
            continue
        if line.startswith("include") and line[7:8].isspace():
            for pattern in line[8:].split():
                if not pattern.startswith("/"):
                    pattern = os.path.join(os.path.dirname(conf), pattern)
                base = str(root).rstrip("/")
                for match in sorted(glob.glob(str(_under(root, pattern)))):
                    _read_conf(root, match[len(base) :] or "/", out, seen, problems)
        elif line.startswith("hwcap"):
            continue  # an old glibc feature: not a folder
        else:
            for folder in re.split(r"[\s:,=]+", line):  # old syntax allows dir=TYPE, commas
                if folder.startswith("/"):
                    out.append(SearchDir(str(_under(root, folder)), str(_under(root, conf))))
    if broken:
        problems.append(
            ConfProblem(str(_under(root, conf)), f"a NUL byte in {broken} of its lines")
        )


def _under(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def is_under(path: str, folders: Iterable[str]) -> bool:
    """Whether `path`, links resolved, is one of `folders` (already resolved) or inside one."""
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f.rstrip("/") + "/") for f in folders)


def search_order(
    environ: Mapping[str, str],
    root: Path = Path("/"),
    problems: Optional[list[ConfProblem]] = None,
) -> list[SearchDir]:
    """The machine's part of the loader's search: LD_LIBRARY_PATH, the cache's folders, the
    defaults; a folder named twice keeps its first place. Configuration files read only in
    part go to `problems` when given."""
    out: list[SearchDir] = []
    seen: set[str] = set()
    for entry in [
        *library_path_dirs(environ),
        *conf_dirs(root, problems=problems),
        *(SearchDir(str(_under(root, d)), DEFAULT) for d in DEFAULT_DIRS),
    ]:
        key = os.path.realpath(entry.path)  # a link to a folder named already adds nothing
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def libraries_in(folder: Path, origin: str) -> list[Library]:
    """The CUDA libraries in `folder`, one per soname (the soname's own file when present, as
    the loader looks it up)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    by_soname: dict[str, str] = {}
    for name in names:
        soname = cuda_soname(name)
        if soname is None or not (folder / name).is_file():
            continue
        if name == soname or soname not in by_soname:
            by_soname[soname] = name
    return [
        Library(s, str(folder / n), version_of(str(folder / n)), origin)
        for s, n in sorted(by_soname.items())
    ]
