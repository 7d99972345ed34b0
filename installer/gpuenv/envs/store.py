"""Where environments live, and what gpuenv records about each.

A named environment is a link, `<store>/<name>`, to a real folder, `<store>/.versions/<name>-<h>`,
where `<h>` names the lockfile it was built from. Replacing an environment is building a new
folder, then swapping the link in one atomic rename (transaction.py). Environments are not
relocatable (scripts name their interpreter by absolute path), so a folder is built where it
will stay. `--prefix DIR` works the same way with DIR as the link.

Everything on disk is untrusted (another process, a crash or a person may have written it): a
link counts as an environment only when it is one gpuenv made (it points, by its own text, at a
version folder of its name), metadata is checked for shape before use, and removal goes through
gpuenv.envs.fs, which never follows a link nor leaves the store.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from gpuenv.envs import fs
from gpuenv.envs.errors import CorruptEnvironment, EnvironmentNotFound, StoreInputError
from gpuenv.fs.safe_paths import is_regular_file, is_sha256, is_windows_device
from gpuenv.fs.workdir import gpuenv_home

METADATA = "gpuenv-env.json"
VERSIONS = ".versions"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
VERSION_HASH = re.compile(r"[0-9a-f]{12}")
_MAX_METADATA = 4 * 1024 * 1024


def store_root() -> Path:
    return gpuenv_home() / "envs"


def name_problem(name: str) -> Optional[str]:
    """Why `name` cannot name an environment, or None: a plain file name only."""
    if not _NAME.fullmatch(name):
        return "use letters, digits, '.', '_' and '-', starting with a letter or digit (at most 64)"
    if is_windows_device(name):
        return "it is a device name on Windows"
    return None


def check_name(name: str) -> str:
    problem = name_problem(name)
    if problem:
        raise StoreInputError(f"environment name {name!r}: {problem}")
    return name


@dataclass(frozen=True)
class EnvLocation:
    """The link users know an environment by, and where its versions are built."""

    link: Path
    versions: Path
    name: str

    @classmethod
    def named(cls, name: str) -> EnvLocation:
        check_name(name)
        root = store_root()
        return cls(link=root / name, versions=root / VERSIONS, name=name)

    @classmethod
    def prefix(cls, path: Path) -> EnvLocation:
        """DIR itself is the link; its parent folder is taken with its links resolved, so the
        link and its versions folder sit side by side on the same real folder."""
        path = Path(os.path.abspath(path))
        if not path.name or path.name in (".", ".."):
            raise StoreInputError(f"--prefix {path}: name a folder to create, not a root")
        path = Path(os.path.realpath(path.parent)) / path.name
        return cls(link=path, versions=path.parent / f".{path.name}.gpuenv", name=path.name)

    @property
    def root(self) -> Path:
        """The folder gpuenv owns here (the store, or a --prefix's parent): removal stays
        inside it and follows no link below it."""
        return self.link.parent

    def version_dir(self, lock_hash: str) -> Path:
        return self.versions / f"{self.name}-{lock_hash[:12]}"

    def is_version_name(self, folder: str) -> bool:
        """`<name>-<12 hex>`: a version folder of this environment (and of no other)."""
        head, sep, tail = folder.rpartition("-")
        return bool(sep) and head == self.name and bool(VERSION_HASH.fullmatch(tail))

    @property
    def lock_path(self) -> Path:
        return self.versions / f"{self.name}.lock"

    def own_target(self) -> Optional[Path]:
        """Where the link points, only if gpuenv made it: by its own text it names a version
        folder of this environment, `<versions>/<name>-<h>` (which may be gone). An alias, a
        link elsewhere or a plain folder gives None."""
        target = fs.link_target(self.link)
        if target is None or not self.is_version_name(target.name):
            return None
        if os.path.realpath(target.parent) != os.path.realpath(self.versions):
            return None
        return self.versions / target.name

    def linked_version(self) -> Optional[Path]:
        """The version folder gpuenv's link points at, when it is there (a real folder)."""
        target = self.own_target()
        return target if target is not None and fs.is_real_dir(target) else None

    @property
    def previous_link(self) -> Path:
        """gpuenv's link to the version the last install replaced: kept, restorable with
        `gpuenv envs rollback`, until the next successful install replaces it in turn."""
        return self.versions / f"{self.name}.previous"

    def previous_version(self) -> Optional[Path]:
        """The complete version folder the previous link names (only one of this environment's,
        never the live one), or None."""
        target = fs.link_target(self.previous_link)
        if target is None or not self.is_version_name(target.name):
            return None
        if os.path.realpath(target.parent) != os.path.realpath(self.versions):
            return None
        folder = self.versions / target.name
        live = self.linked_version()
        if not fs.is_real_dir(folder) or (live is not None and live.name == folder.name):
            return None
        meta = folder / METADATA
        return folder if is_regular_file(meta) else None

    def current(self) -> Optional[Path]:
        """The version folder of a complete environment here (its metadata is written last)."""
        target = self.linked_version()
        if target is None:
            return None
        meta = target / METADATA
        return target if is_regular_file(meta) else None

    def install_refusal(self) -> Optional[str]:
        """Why an install must not go here (something gpuenv did not make is at the link's path,
        or a --prefix inside the store), or None."""
        store = store_root()
        if self.versions != store / VERSIONS:
            if fs.is_inside(self.link, store):
                return f"--prefix {self.link} is inside gpuenv's store; use --name NAME there"
            # the store itself, or a folder above it, even before the store exists: the
            # environment's link would take the store's place, or its folder would hold it
            if fs.is_inside(store, self.link) or fs.same_place(store, self.link):
                return (
                    f"--prefix {self.link} would hold gpuenv's store ({store}); choose a"
                    " folder outside it"
                )
        if fs.is_link(self.versions):
            return f"{self.versions} is a link; gpuenv builds environments only in a real folder"
        if fs.lexists(self.link) and self.own_target() is None:
            return (
                f"{self.link} exists and is not a gpuenv environment ({why_not_ours(self)});"
                " gpuenv leaves it alone: choose another --prefix or --name"
            )
        return None


# -- metadata: written by gpuenv, read as untrusted input ------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "lockfile": (str,),
    "lockfile_sha256": (str,),
    "inputs_hash": (str, type(None)),
    "platform": (str,),
    "python": (str,),
    "backend": (str,),
    "accelerator": (str,),
    "stack": (dict,),
    "plan": (dict,),
    "pip_packages": (list,),
    "installed_at": (str,),
}


def metadata_problem(data: Any) -> Optional[str]:
    """What is wrong with an environment's metadata, or None when every known field has its type."""
    if not isinstance(data, dict):
        return f"its {METADATA} is a JSON {type(data).__name__}, not an object"
    for key, types in _TYPES.items():
        if key in data and not isinstance(data[key], types):
            return f"{METADATA}: {key!r} is a {type(data[key]).__name__}"
    stack = data.get("stack", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in stack.items()):
        return f"{METADATA}: 'stack' must map names to version strings"
    if not all(isinstance(p, str) for p in data.get("pip_packages", [])):
        return f"{METADATA}: 'pip_packages' must be a list of names"
    sha = data.get("lockfile_sha256")
    if sha is not None and not is_sha256(sha):
        return f"{METADATA}: 'lockfile_sha256' is not a sha256"
    platform = data.get("platform")
    if platform is not None:
        from gpuenv.recipes.model import PLATFORMS  # the platforms gpuenv makes environments for

        if platform not in PLATFORMS:
            shown = repr(platform) if len(platform) <= 40 else repr(platform[:40]) + "..."
            return f"{METADATA}: 'platform' is {shown}, not one of {', '.join(PLATFORMS)}"
    return None


def read_metadata(env_dir: Path) -> dict[str, Any]:
    """An environment's metadata, checked for shape; CorruptEnvironment says what is wrong."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    path = env_dir / METADATA
    if not is_regular_file(path):
        raise CorruptEnvironment(f"{env_dir} is not a gpuenv environment (no {METADATA})")
    try:
        raw = read_bounded(path, _MAX_METADATA, METADATA, follow_links=False)
    except UnsafePathError as exc:
        raise CorruptEnvironment(f"{env_dir}: {exc}") from None
    from gpuenv.fs import strict_json

    try:
        data = strict_json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # deep nesting and non-finite numbers included
        raise CorruptEnvironment(f"{env_dir}: {METADATA} is not JSON ({exc})") from None
    problem = metadata_problem(data)
    if problem:
        raise CorruptEnvironment(f"{env_dir}: {problem}")
    checked: dict[str, Any] = data
    return checked


def write_metadata(env_dir: Path, data: dict[str, Any]) -> None:
    """Written last: its presence marks a version folder as complete."""
    from gpuenv.fs.atomic_write import atomic_write_text

    # the one atomic writer: a link planted at the metadata's name is refused, not followed
    atomic_write_text(env_dir / METADATA, json.dumps(data, indent=2, sort_keys=True) + "\n")


def interpreter(env_dir: Path) -> Path:
    """The environment's Python (venv and conda layouts, POSIX and Windows)."""
    for rel in ("bin/python", "Scripts/python.exe", "python.exe", "bin/python3"):
        candidate = env_dir / rel
        if candidate.exists():
            return candidate
    raise EnvironmentNotFound(f"{env_dir} has no Python interpreter")


def why_not_ours(location: EnvLocation) -> str:
    link = location.link
    target = fs.link_target(link)
    if target is not None:
        if location.is_version_name(target.name) and not fs.lexists(target):
            return f"a dangling link to {target} (its version folder is gone)"
        return f"a link to {target} that gpuenv did not make (an alias or a link elsewhere)"
    if fs.is_link(link):
        return "a link gpuenv cannot read"
    if fs.is_real_dir(link):
        return "a folder, not a link gpuenv made"
    return "a stray file, not an environment"
