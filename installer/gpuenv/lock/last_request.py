"""uv started first thing, on the request the same `gpuenv lock` command line made last time.

Before uv can start, gpuenv spends 50-80 ms on the interpreter, click, the knowledge base and
resolving; uv's own work is 150-450 ms against the default index. The request a command line
makes rarely changes from one run to the next (the lab admin's lock, check, relock loop), so
the `gpuenv` program (`_entry`, before click or the knowledge base is even imported) starts uv on
the request its command line made last time, and the lock keeps that run only when the request
it makes, once resolved, is exactly the same (PipRequest equality: the same request gets the
same answer); otherwise it stops it and starts uv on the right one. A wrong guess costs a killed
uv process, never a different lockfile. Only the program does this, never an importer of
gpuenv's library (nor a test calling the CLI in-process).

One request per command line (its arguments and working folder, hashed) is kept in gpuenv's
cache (`lock-requests/`), read only when it is the user's own (fs.private_read): a request names
the program that runs. A request that names an index with credentials (a password, a token in
the query) is not kept: credentials stay where the user put them.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:  # every command starts here (_entry): only a lock imports more
    from collections.abc import Sequence
    from typing import Any, Optional

    from gpuenv.lock.pypi import PipCompile, PipRequest
    from gpuenv.uv.spawn import Process

    # the request as read (checked by _valid), and uv running on it in its work folder
    _Early = tuple[dict[str, Any], Process, str]

KIND = "lock-requests"
MAX_BYTES = 1 << 20  # a request is a few kB: the requirements, constraints and index options

# What the program started for its lock, until the lock command claims it. Only os, zlib and
# marshal are imported to start it (lock.uv_start, uv.spawn; json brought re and enum, 5-7 ms
# before uv started): the request becomes a PipRequest when claimed.
_early: Optional[tuple[str, Optional[_Early]]] = None
_program = False  # the `gpuenv` program's lock (start_early ran), not a library caller's


def command_key(argv: Sequence[str]) -> str:
    """One command line: its arguments, and the folder its relative paths start from. A
    checksum, not a cryptographic hash (hashlib would load OpenSSL before uv starts): two
    command lines that shared a key would only share a guess, and a wrong guess is stopped."""
    import zlib

    text = "\0".join([*argv, os.getcwd()]).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}{len(text):x}"


def start_early(argv: Sequence[str]) -> None:
    """For a `gpuenv lock` command line (the program calls it for those alone: _entry, by
    commands.table.command_of): uv started on its last request, kept for the lock command to
    claim."""
    global _early, _program
    _program = True
    key = command_key(argv)
    _early = (key, start(key))
    if _early[1] is None:  # no run reads the lock's interpreter meanwhile: uv looks at it now
        from gpuenv.lock import early_interpreter

        early_interpreter.start_early()


def freeze_what_lasts() -> None:
    """In the program's lock, as it waits for uv: what it made until then (modules, the
    knowledge base, the plan) lasts until the command ends, so it is frozen (gc.freeze) and no
    collection walks it again; one set off by uv's answer and the RECORDs read next walked some
    50,000 objects, 12-20 ms of a cold lock after uv. Never for a library caller: what it froze
    would never be freed."""
    if _program:
        import gc

        gc.freeze()


def claim() -> tuple[Optional[str], Optional[PipCompile]]:
    """The key of this program's lock command line and the run started for it (None, None
    where the program did not start one: another command, or the CLI called in-process)."""
    global _early
    early, _early = _early, None
    if early is None:
        return None, None
    key, started = early
    if started is None:
        return key, None
    from gpuenv.lock.pypi import PipCompile

    data, process, work = started
    request = _request(data)
    return key, PipCompile(request, plan=None, started=(process, work))


def cancel_unclaimed() -> None:
    """Stop a run no lock claimed (the command line failed before the lock began), and a look
    at the interpreter no lock waited for."""
    _key, guessed = claim()
    if guessed is not None:
        guessed.cancel()
    from gpuenv.lock import early_interpreter

    early_interpreter.stop()


def start(key: str) -> Optional[_Early]:
    """uv started on this command line's last request; None when there is none (or uv could
    not start: the lock starts it again in its usual order and says why)."""
    data = _read(key)
    if data is None:
        return None
    from gpuenv.lock import uv_start

    try:
        process, work = uv_start.start(
            data["uv"],
            data["project"],
            data["constraints"],
            data["options"],
            data["index_args"],
            data["cutoff"],
        )
    except Exception:
        return None
    return data, process, work


def remember(key: str, early: Optional[PipCompile], guessed: Optional[PipCompile]) -> None:
    """Keep the request of this run's early uv run for the next run of the command line (not
    written again when it is the one this run guessed); never fails the lock."""
    if early is None or (guessed is not None and guessed.request == early.request):
        return
    import json
    import marshal

    from gpuenv import cache
    from gpuenv.output.redact import redact_text

    data = _as_data(early.request)
    text = json.dumps(data, sort_keys=True)
    if redact_text(text) != text:
        return  # an index URL with a password or a token: never written to disk
    cache.write_entry(KIND, _file(key), marshal.dumps(data))


def _file(key: str) -> str:
    """The cache file of one command line's request: plain data (strings, lists, None) in
    marshal's format, which needs no import (json's module brings re)."""
    return f"{key}.marshal"


def _as_data(request: PipRequest) -> dict[str, Any]:
    return {
        "uv": request.uv,
        "project": request.project,
        "constraints": request.constraints,
        "options": list(request.options),
        "index_args": list(request.index_args),
        "cutoff": list(request.cutoff),
        "exclude_newer": request.exclude_newer,
        "requirements": list(request.requirements),
        "routed": [list(pair) for pair in request.routed],
        "sources": request.sources,
    }


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _valid(data: object) -> bool:
    """Whether the data is exactly what _as_data makes (checked before anything is started)."""
    if not isinstance(data, dict):
        return False
    routed = data.get("routed")
    exclude_newer = data.get("exclude_newer")
    return (
        all(isinstance(data.get(k), str) for k in ("uv", "project", "constraints", "sources"))
        and all(_strings(data.get(k)) for k in ("options", "index_args", "cutoff", "requirements"))
        and isinstance(routed, list)
        and all(_strings(p) and len(p) == 2 for p in routed)
        and (exclude_newer is None or isinstance(exclude_newer, str))
        and bool(data["uv"])  # no uv: an empty request is never started
        and bool(data["requirements"])  # nor one with nothing to lock (PipCompile starts none)
    )


def _request(data: dict[str, Any]) -> PipRequest:
    """The request of data that is _valid."""
    from gpuenv.lock.pypi import PipRequest

    return PipRequest(
        uv=data["uv"],
        project=data["project"],
        constraints=data["constraints"],
        options=tuple(data["options"]),
        index_args=tuple(data["index_args"]),
        cutoff=tuple(data["cutoff"]),
        exclude_newer=data["exclude_newer"],
        requirements=tuple(data["requirements"]),
        routed=tuple((p[0], p[1]) for p in data["routed"]),
        sources=data["sources"],
    )


def _read(key: str) -> Optional[dict[str, Any]]:
    import marshal

    from gpuenv import cache

    raw = cache.read_entry(KIND, _file(key), MAX_BYTES)
    try:
        # the user's own file (read_entry): marshal is not meant for data from anyone else
        data = marshal.loads(raw) if raw is not None else None
    except (ValueError, EOFError):
        return None
    return data if _valid(data) else None
