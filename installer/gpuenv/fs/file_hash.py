"""A file's sha256, for telling whether a command changed it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def file_sha256(path: Path) -> Optional[str]:
    """The file's content hash; None when there is no regular file (yet). Only a regular file is
    opened: a pipe or a device given as -o would block or never end (lock then refuses it)."""
    import hashlib  # not at the top: `gpuenv lock` imports this before it starts uv

    from gpuenv.fs.safe_paths import is_regular_file

    if not is_regular_file(path):
        return None
    try:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None
