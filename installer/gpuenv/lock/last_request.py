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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # every command starts here (_entry): only a lock imports more
    from gpuenv.lock.pypi import PipCompile, PipRequest

KIND = "lock-requests"
MAX_BYTES = 1 << 20  # a request is a few kB: the requirements, constraints and index options


# the group's own options, which may come before the command's name
_GLOBAL_FLAGS = frozenset({"-v", "--verbose", "-q", "--quiet"})

# what the program started for its lock, until the lock command claims it
_early: Optional[tuple[str, Optional[PipCompile]]] = None


def command_key(argv: Sequence[str]) -> str:
    """One command line: its arguments, and the folder its relative paths start from."""
    import hashlib
    import json

    text = json.dumps([list(argv), os.getcwd()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def start_early(argv: Sequence[str]) -> None:
    """For a `gpuenv lock` command line: uv started on its last request, kept for the lock
    command to claim. Anything else: nothing."""
    global _early
    rest = list(argv)
    while rest and rest[0] in _GLOBAL_FLAGS:
        rest.pop(0)
    if not rest or rest[0] != "lock":
        return
    key = command_key(argv)
    _early = (key, start(key))


def claim() -> tuple[Optional[str], Optional[PipCompile]]:
    """The key of this program's lock command line and the run started for it (None, None
    where the program did not start one: another command, or the CLI called in-process)."""
    global _early
    early, _early = _early, None
    return early if early is not None else (None, None)


def cancel_unclaimed() -> None:
    """Stop a run no lock claimed (the command line failed before the lock began)."""
    _key, guessed = claim()
    if guessed is not None:
        guessed.cancel()


def start(key: str) -> Optional[PipCompile]:
    """uv started on this command line's last request; None when there is none (or uv could
    not start: the lock starts it again in its usual order and says why)."""
    request = _read(key)
    if request is None:
        return None
    from gpuenv.lock.pypi import PipCompile

    try:
        return PipCompile(request, plan=None)
    except Exception:
        return None


def remember(key: str, early: Optional[PipCompile], guessed: Optional[PipCompile]) -> None:
    """Keep the request of this run's early uv run for the next run of the command line (not
    written again when it is the one this run guessed); never fails the lock."""
    if early is None or (guessed is not None and guessed.request == early.request):
        return
    import json

    from gpuenv import cache
    from gpuenv.output.redact import redact_text

    text = json.dumps(_to_json(early.request), sort_keys=True)
    if redact_text(text) != text:
        return  # an index URL with a password or a token: never written to disk
    cache.write_entry(KIND, f"{key}.json", text.encode())


def _to_json(request: PipRequest) -> dict[str, Any]:
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


def _strings(value: object) -> Optional[tuple[str, ...]]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _from_json(data: object) -> Optional[PipRequest]:
    """The request, or None for anything that is not exactly what _to_json writes."""
    if not isinstance(data, dict):
        return None
    texts = [data.get(k) for k in ("uv", "project", "constraints", "sources")]
    lists = [_strings(data.get(k)) for k in ("options", "index_args", "cutoff", "requirements")]
    routed = data.get("routed")
    pairs = [_strings(p) for p in routed] if isinstance(routed, list) else [None]
    exclude_newer = data.get("exclude_newer")
    if (
        not all(isinstance(t, str) for t in texts)
        or any(v is None for v in lists)
        or any(p is None or len(p) != 2 for p in pairs)
        or not (exclude_newer is None or isinstance(exclude_newer, str))
        or not texts[0]  # no uv: an empty request is never started
    ):
        return None
    from gpuenv.lock.pypi import PipRequest

    uv, project, constraints, sources = (str(t) for t in texts)
    options, index_args, cutoff, requirements = (v or () for v in lists)
    return PipRequest(
        uv=uv,
        project=project,
        constraints=constraints,
        options=options,
        index_args=index_args,
        cutoff=cutoff,
        exclude_newer=exclude_newer,
        requirements=requirements,
        routed=tuple((p[0], p[1]) for p in pairs if p is not None),
        sources=sources,
    )


def _read(key: str) -> Optional[PipRequest]:
    import json

    from gpuenv import cache

    raw = cache.read_entry(KIND, f"{key}.json", MAX_BYTES)
    try:
        return _from_json(json.loads(raw)) if raw is not None else None
    except ValueError:
        return None
