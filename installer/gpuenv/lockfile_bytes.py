"""A lockfile's bytes, read bounded: what install hashes for its no-op check and parses after.

Outside gpuenv.lock so that install can read the file, and start uv on the Python it names,
before it imports the lockfile stack (gpuenv.lock loads the lock pipeline and the resolver)."""

from __future__ import annotations

from pathlib import Path

from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

MAX_LOCKFILE_BYTES = 64 << 20


def read_lockfile_bytes(path: Path) -> bytes:
    """The file's bytes; a pipe, a device, a folder or a file over MAX_LOCKFILE_BYTES is
    refused (LockfileError, exit 2) without blocking on it or reading it whole."""
    try:
        return read_bounded(Path(path), MAX_LOCKFILE_BYTES, "lockfile")
    except UnsafePathError as exc:
        from gpuenv.lock.errors import LockfileError

        raise LockfileError(str(exc)) from None
