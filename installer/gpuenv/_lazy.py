"""A package's thin face: names that load from their modules on first use.

Importing any submodule runs its package's `__init__` first, so a package whose modules are heavy
(the lock pipeline, the resolver) names them here instead of importing them: `gpuenv.lock.load`
must not load uv's runner and the resolver with it."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name of `homes` imported from its module once,
    then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(importlib.import_module(package), name, value)  # looked up once
        return value

    return __getattr__
