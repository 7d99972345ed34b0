"""One message for an OSError while writing: the disk is full, the place is not writable, or
something else, each with what to do about it. Every writer's caller says where else to write
(`-o PATH`, `--prefix DIR`) and what was left as it was."""

from __future__ import annotations

import errno

# EDQUOT (a quota) reads as a full disk to the user; Windows' errno has no EDQUOT
FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def disk_advice(where: object, exc: OSError, *, elsewhere: str, outcome: str = "") -> str:
    """`cannot write WHERE: <the system's words>; <the fix>.` then `outcome` (what was left
    unchanged). `elsewhere` is the other place the command can write to."""
    reason = exc.strerror or str(exc)
    if exc.errno in FULL:
        fix = f"free some space on the disk that holds it, or {elsewhere}"
    elif exc.errno in NOT_WRITABLE:
        fix = f"it is not writable (read-only, or not yours): fix its permissions, or {elsewhere}"
    else:
        fix = elsewhere
    text = f"cannot write {where}: {reason}; {fix}."
    return f"{text} {outcome}" if outcome else text
