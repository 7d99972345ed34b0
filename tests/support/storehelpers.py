"""Helpers for store tests: environments as gpuenv lays them out, without building a Python."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from gpuenv.envs.store import METADATA, EnvLocation, store_root, write_metadata


def fake_env(name: str, *, metadata: Any = None, raw: bytes | None = None) -> Path:
    """`<store>/<name>` -> `<store>/.versions/<name>-<h>` as a swap leaves it, with metadata
    (valid by default; `raw` writes those bytes instead). The version folder is returned."""
    location = EnvLocation.named(name)
    version = location.version_dir(hashlib.sha256(name.encode()).hexdigest())
    version.mkdir(parents=True)
    (version / "payload.txt").write_text(f"{name}'s files\n")
    if raw is not None:
        (version / METADATA).write_bytes(raw)
    else:
        write_metadata(version, fake_metadata(name) if metadata is None else metadata)
    os.symlink(version, location.link, target_is_directory=True)
    return version


def fake_metadata(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "lockfile_sha256": hashlib.sha256(name.encode()).hexdigest(),
        "platform": "linux-64",
        "python": "3.11",
        "backend": "venv",
        "accelerator": "cpu",
        "stack": {"jax": "0.4.30 [cpu]"},
        "plan": {},
    }


def outside_folder(base: Path) -> Path:
    """A folder of the user's own, outside the store, with a file that must survive."""
    folder = base / "users-own"
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("years of work\n")
    return folder


def snapshot(root: Path) -> dict[str, str]:
    """Every path under `root` (links by their text, files by a hash of their bytes)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                out[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[str(path)] = "dir"
    return out


def envs_json(result_stdout: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(result_stdout)
    return data


def store() -> Path:
    return store_root()


class StandInVerdict:
    """What setup reads of a verify report, for tests where verify itself is not the subject:
    it passed, and every framework imported (no framework checks to fail)."""

    ok = True
    frameworks: tuple[object, ...] = ()
    problems: tuple[str, ...] = ()

    def render(self) -> str:
        return "verified (stand-in)"
