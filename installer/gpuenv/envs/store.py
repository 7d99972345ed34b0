"""Where environments live, and what gpuenv records about each.

A named environment is a link, `<store>/<name>`, to a real folder, `<store>/.versions/<name>-<h>`,
where `<h>` names the lockfile it was built from. Replacing an environment is building a new
folder, then swapping the link in one atomic rename (transaction.py). Environments are not
relocatable (scripts name their interpreter by absolute path), so a folder is built where it
will stay. `--prefix DIR` works the same way with DIR as the link.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from gpuenv.envs.errors import EnvironmentNotFound, InstallError

HOME_ENV = "GPUENV_HOME"
METADATA = "gpuenv-env.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def store_root() -> Path:
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override) / "envs"
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuenv", appauthor=False)) / "envs"


@dataclass(frozen=True)
class EnvLocation:
    """The link users know an environment by, and where its versions are built."""

    link: Path
    versions: Path
    name: str

    @classmethod
    def named(cls, name: str) -> EnvLocation:
        if not _NAME.match(name):
            raise InstallError(
                f"environment name {name!r}: use letters, digits, '.', '_' and '-' (at most 64)"
            )
        root = store_root()
        return cls(link=root / name, versions=root / ".versions", name=name)

    @classmethod
    def prefix(cls, path: Path) -> EnvLocation:
        path = Path(os.path.abspath(path))
        return cls(link=path, versions=path.parent / f".{path.name}.gpuenv", name=path.name)

    def version_dir(self, lock_hash: str) -> Path:
        return self.versions / f"{self.name}-{lock_hash[:12]}"

    @property
    def lock_path(self) -> Path:
        return self.versions / f"{self.name}.lock"

    def current(self) -> Optional[Path]:
        """The folder the link points to, if the environment exists and is complete."""
        if not self.link.is_symlink() and not self.link.exists():
            return None
        target = self.link.resolve()
        return target if (target / METADATA).is_file() else None


def read_metadata(env_dir: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((env_dir / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EnvironmentNotFound(f"{env_dir} is not a gpuenv environment ({exc})") from exc
    return data


def write_metadata(env_dir: Path, data: dict[str, Any]) -> None:
    """Written last: its presence marks a version folder as complete."""
    tmp = env_dir / (METADATA + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, env_dir / METADATA)


def interpreter(env_dir: Path) -> Path:
    """The environment's Python (venv and conda layouts, POSIX and Windows)."""
    for rel in ("bin/python", "Scripts/python.exe", "python.exe", "bin/python3"):
        candidate = env_dir / rel
        if candidate.exists():
            return candidate
    raise EnvironmentNotFound(f"{env_dir} has no Python interpreter")


def folder_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


@dataclass(frozen=True)
class EnvSummary:
    name: str
    path: Path
    metadata: dict[str, Any]
    size: int


def list_environments() -> list[EnvSummary]:
    root = store_root()
    if not root.is_dir():
        return []
    out = []
    for link in sorted(root.iterdir()):
        if link.name.startswith("."):
            continue
        location = EnvLocation.named(link.name)
        current = location.current()
        if current is None:
            continue
        out.append(EnvSummary(link.name, link, read_metadata(current), folder_size(current)))
    return out


def remove_environment(location: EnvLocation) -> Path:
    current = location.current()
    if current is None:
        raise EnvironmentNotFound(f"no gpuenv environment at {location.link}")
    location.link.unlink() if location.link.is_symlink() else _remove_link_dir(location.link)
    shutil.rmtree(current, ignore_errors=True)
    return current


def _remove_link_dir(path: Path) -> None:
    # a Windows junction reads as a directory; rmdir removes the junction, not its target
    os.rmdir(path) if sys.platform == "win32" else shutil.rmtree(path)
