"""The compiled methods of gpuenv's dataclasses, kept between runs as Python keeps bytecode.

Python makes each dataclass's `__init__`, `__repr__`, `__eq__`, `__hash__` (and a frozen one's
`__setattr__` and `__delattr__`) by compiling source text when the class is defined. gpuenv's
records are frozen dataclasses, so every command compiled some 200 such functions at start-up:
18 ms of `gpuenv resolve`, more than resolving takes. The text is the same on every run, so
the command line keeps its compiled form in gpuenv's cache (`code/`): `dataclasses`' own call
to `exec` gets the code compiled before instead of the text (the same text compiles to the same
code, so the classes are the same). Only the `gpuenv` program does this (`_entry`), never an
importer of gpuenv's library; a cache entry that is not the user's own or not valid is ignored,
as the pickled knowledge base is (fs.private_read: marshalled code runs when it is called).
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import sys
import types
from typing import Any, Optional

KIND = "code"
MAX_BYTES = 8 << 20  # ~250 functions are ~300 kB; a far larger file is not one gpuenv wrote
MAX_ENTRIES = 4096  # every command's classes and then some: more means texts nobody repeats
ANY_COMMAND = "any"  # the shard of a command line that names no command (`gpuenv --help`)

_compiled: dict[str, types.CodeType] = {}
_added = False
_shard = ANY_COMMAND


def entry_name(shard: str) -> str:
    """The cache file of one command's code. One file per command: a command reads the code of
    the classes it defines, not every command's (all of them together took 3 ms to load)."""
    # the marshal format and the compiler's output are one interpreter build's own
    return f"dataclasses-{sys.implementation.cache_tag}-{sys.hexversion:x}-{shard}.marshal"


def _exec(
    source: Any, globals: Optional[dict[str, Any]] = None, locals: Optional[Any] = None, /
) -> None:
    """exec() as `dataclasses` calls it, reusing the compiled code of a text seen before."""
    global _added
    if isinstance(source, str):
        code = _compiled.get(source)
        if code is None:
            # dont_inherit: compiled as exec() in `dataclasses` compiles it (no __future__
            # flags there), not with this module's `annotations`
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_compiled) < MAX_ENTRIES:
                _compiled[source] = code
                _added = True
        source = code
    builtins.exec(source, globals, locals)


def install(shard: str = ANY_COMMAND) -> None:
    """Hand `dataclasses` the cached code from now on (classes defined after this call), that
    of the command `shard` (a name of gpuenv.commands.table, never a path)."""
    global _shard
    _shard = shard
    _compiled.update(_read())
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # found before the builtin


def uninstall() -> None:
    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]


def forget() -> None:
    """Write nothing at exit (`gpuenv cache clean` leaves an empty cache)."""
    global _added
    _added = False


def save() -> None:
    """Write the cache if this run compiled texts it did not hold; never fails the command."""
    if not _added:
        return
    from gpuenv import cache

    entries = {**_read(), **_compiled}
    if len(entries) > MAX_ENTRIES:
        entries = dict(_compiled)
    cache.write_entry(KIND, entry_name(_shard), marshal.dumps(entries))


def _read() -> dict[str, types.CodeType]:
    from gpuenv import cache

    raw = cache.read_entry(KIND, entry_name(_shard), MAX_BYTES)
    try:
        loaded = marshal.loads(raw) if raw is not None else {}
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {
        text: code
        for text, code in loaded.items()
        if isinstance(text, str) and isinstance(code, types.CodeType)
    }
