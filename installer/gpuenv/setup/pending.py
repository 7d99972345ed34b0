"""A new lockfile waits beside the recorded one until its environment is live: an interrupted
setup leaves the old environment with its own lockfile, and the next run removes what a killed
one left."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
import time
from pathlib import Path

from gpuenv.setup.record import SetupRecordError


def pending_lockfile(final: Path) -> Path:
    """Where setup writes a new lockfile until its environment is live: beside `final` (so
    moving it into place is one rename), under a name no other run uses. Those a killed setup
    left are removed first."""
    remove_stale_pending(final)
    return final.with_name(f".{final.name}.{os.getpid()}-{secrets.token_hex(4)}.pending")


_STALE_AFTER = 24 * 3600.0  # where a pid cannot be checked (Windows): older than a day


def remove_stale_pending(final: Path) -> list[Path]:
    """Pending lockfiles of `final` whose setup is gone (killed): a regular file, named as
    pending_lockfile names them, whose pid no longer runs."""
    pattern = re.compile(re.escape(f".{final.name}.") + r"(\d+)-[0-9a-f]{8}\.pending")
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(final.parent):
            found = pattern.fullmatch(entry.name)
            if found is None or not entry.is_file(follow_symlinks=False):
                continue
            if _still_running(int(found.group(1)), entry.stat(follow_symlinks=False).st_mtime):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _still_running(pid: int, mtime: float) -> bool:
    if sys.platform == "win32":  # os.kill would end the process there
        return time.time() - mtime < _STALE_AFTER
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but not ours to signal
    return True


def promote_lockfile(pending: Path, final: Path) -> None:
    """The environment built from `pending` is live: from now on it is the recorded lockfile."""
    try:
        os.replace(pending, final)
    except OSError as exc:
        raise SetupRecordError(
            f"the environment is installed, but its lockfile could not be moved to {final}"
            f" ({exc.strerror}); it is at {pending}"
        ) from exc


def discard_pending(pending: Path) -> None:
    with contextlib.suppress(OSError):
        pending.unlink()
