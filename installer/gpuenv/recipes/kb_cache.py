"""Loading the knowledge base: found by its files' stamps, parsed once per content, and cached.

TOML parsing is most of resolve's time, so the parsed records are cached (keyed by a hash of
every file and by the shape of the record classes) in gpuenv's cache folder, and found again
by the files' stamps (names, sizes, times) while they stay unchanged.
"""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Optional, Union

from gpuenv import cache
from gpuenv.recipes import gpu_names, kb, model
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import RecipeError

if TYPE_CHECKING:
    from pathlib import Path

RECIPES_ENV = "GPUENV_RECIPES"


def _record_shape() -> str:
    """The fields (names and types) of every class a cached knowledge base holds, as a short
    checksum: a pickle of records that have since gained, lost or retyped a field would load
    without error and be wrong, so it is keyed out instead."""
    import zlib

    shapes = [
        f"{cls.__qualname__}:" + ",".join(f"{f.name}={f.type}" for f in dataclasses.fields(cls))
        for module in (model, gpu_names, kb)
        for cls in sorted(vars(module).values(), key=lambda v: getattr(v, "__qualname__", ""))
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == module.__name__
    ]
    return format(zlib.crc32(";".join(shapes).encode()), "08x")


_RECORD_SHAPE = _record_shape()


def recipes_dir() -> Path:
    """Where the knowledge base lives: $GPUENV_RECIPES, the installed copy, or the checkout."""
    from pathlib import Path

    return Path(recipes_root())


def recipes_root() -> str:
    """recipes_dir() as text (pathlib stays off resolve's start-up)."""
    override = os.environ.get(RECIPES_ENV)
    if override:
        return override
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the gpuenv package
    packaged = os.path.join(here, "_recipes")
    if os.path.isdir(packaged):
        return packaged
    return os.path.join(os.path.dirname(os.path.dirname(here)), "recipes")


@lru_cache(maxsize=4)
def load_knowledge_base(root: Optional[Union[str, Path]] = None) -> KnowledgeBase:
    """The knowledge base, parsed once per content: TOML parsing is most of resolve's time, so
    the parsed form is cached (keyed by a hash of every file) in gpuenv's cache folder, and
    found again by the files' stamps (names, sizes, times) while they stay unchanged."""
    folder = os.fspath(root) if root is not None else recipes_root()
    if not os.path.isdir(folder):
        raise RecipeError(f"knowledge base not found at {folder} (set {RECIPES_ENV} to its folder)")
    # what Path.glob("*.toml") lists: no hidden files
    paths = sorted(
        os.path.join(folder, name)
        for name in os.listdir(folder)
        if name.endswith(".toml") and not name.startswith(".")
    )
    # Stamped before the files are read, so a file changed while they are read has a new stamp
    # next time (to the file system's time resolution, as for Python's own bytecode cache).
    stamp = _stamp(paths)
    known = _known_stamps()
    remembered = known.get(folder)
    if isinstance(remembered, tuple) and len(remembered) == 2 and remembered[0] == stamp:
        cached = cache.read_pickle("recipes", remembered[1])
        if isinstance(cached, KnowledgeBase) and remembered[1] == _cache_key(cached.digest):
            cached.root = folder  # the same content may have been cached from another folder
            return cached
    kb = _load_by_content(folder, paths)
    known.pop(folder, None)  # re-inserted last: the most recently read folders are kept
    known[folder] = (stamp, _cache_key(kb.digest))
    cache.write_pickle("recipes", _STAMPS, dict(list(known.items())[-_STAMPED_ROOTS:]))
    return kb


# Which content each knowledge-base folder had when last read, by its files' names, sizes,
# times and inodes, as Python's own bytecode cache does (by time and size): reading and
# hashing 1 MB of TOML (and loading OpenSSL for it) on every run would cost more than the rest
# of loading.
_STAMPS = f"stamps-{_RECORD_SHAPE}"
_STAMPED_ROOTS = 8  # an installed copy, a checkout, a test's folder or two
_Stamp = tuple[tuple[str, int, int, int, int], ...]


def _stamp(paths: list[str]) -> _Stamp:
    # ctime too: no tool can set it, so an edit that restores the old mtime still shows (on
    # POSIX; Windows reports the creation time there). The inode tells a reinstalled file.
    stamps = []
    for path in paths:
        st = os.stat(path)
        stamps.append(
            (os.path.basename(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        )
    return tuple(stamps)


def _known_stamps() -> dict[str, tuple[_Stamp, str]]:
    known = cache.read_pickle("recipes", _STAMPS)
    return known if isinstance(known, dict) else {}


def _cache_key(digest: str) -> str:
    return f"{digest}-{_RECORD_SHAPE}"


MAX_RECIPE_BYTES = 16 << 20  # the largest knowledge-base file is well under 1 MB


def _read_toml(path: Path) -> bytes:
    """One knowledge-base file, through the bounded, non-blocking reader: a FIFO or a device
    among GPUENV_RECIPES/*.toml is a broken knowledge base (exit 4), not a hang."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        return read_bounded(path, MAX_RECIPE_BYTES, "knowledge-base file")
    except UnsafePathError as exc:
        raise RecipeError(str(exc)) from None


def _load_by_content(folder: str, paths: list[str]) -> KnowledgeBase:
    """The knowledge base cached under the hash of the files' bytes (the wheel ships one), or
    parsed from them and cached."""
    import hashlib  # only when the files changed since the last run (see _stamp)
    from pathlib import Path

    raws = {os.path.basename(path): _read_toml(Path(path)) for path in paths}
    digest = hashlib.sha256()
    for name, raw in raws.items():
        digest.update(name.encode() + b"\0" + raw)
    key = digest.hexdigest()
    cached = cache.read_pickle("recipes", _cache_key(key))
    if isinstance(cached, KnowledgeBase) and cached.digest == key:
        cached.root = folder  # cached from another folder with the same files
        return cached
    from gpuenv.recipes.parse import parse_knowledge_base

    kb = parse_knowledge_base(Path(folder), raws, key)
    cache.write_pickle("recipes", _cache_key(key), kb)
    return kb
