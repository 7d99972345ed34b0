"""conda-lock's lockfile modules, without its package `__init__`.

`import conda_lock` imports conda-lock's whole command line (its solvers, conda and PyPI
back-ends): more than a second, for reading and writing a YAML file. gpuenv needs only
`conda_lock.lockfile` and `conda_lock.models`, which do not use the package's `__init__`, so the
package is registered as a bare namespace over its real folder before they are imported. That
relies on conda-lock's layout, so pyproject.toml admits only the releases the tests ran with.

`conda_lock.lockfile` also imports `conda_lock.lookup` (the conda-to-PyPI name mapping, which
downloads its table: it imports requests, filelock and platformdirs, 60-90 ms) for
`apply_categories` alone, which gpuenv never calls. A stand-in takes its place until something
asks it for a name: then the real module is imported and answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

_LOOKUP = "conda_lock.lookup"


def load() -> types.SimpleNamespace:
    if "conda_lock" not in sys.modules:
        spec = importlib.util.find_spec("conda_lock")
        if spec is None or spec.submodule_search_locations is None:
            raise ImportError("conda-lock is not installed; reinstall gpuenv")
        package = types.ModuleType("conda_lock")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        package.__file__ = spec.origin
        sys.modules["conda_lock"] = package
    if _LOOKUP not in sys.modules:
        sys.modules[_LOOKUP] = _LookupStandIn(_LOOKUP)
    from conda_lock.lockfile import parse_conda_lock_file, write_conda_lock_file
    from conda_lock.lockfile.v1.models import HashModel
    from conda_lock.lockfile.v2prelim.models import LockedDependency, Lockfile, LockMeta
    from conda_lock.models.channel import Channel

    api: Any = types.SimpleNamespace(
        parse_conda_lock_file=parse_conda_lock_file,
        write_conda_lock_file=write_conda_lock_file,
        HashModel=HashModel,
        LockedDependency=LockedDependency,
        Lockfile=Lockfile,
        LockMeta=LockMeta,
        Channel=Channel,
    )
    return api  # type: ignore[no-any-return]


def real_lookup() -> types.ModuleType:
    """conda-lock's own `conda_lock.lookup`, imported now if only the stand-in was."""
    if isinstance(sys.modules.get(_LOOKUP), _LookupStandIn):
        del sys.modules[_LOOKUP]
    return importlib.import_module(_LOOKUP)


class _LookupStandIn(types.ModuleType):
    """`conda_lock.lookup` until it is used: every name it is asked for is the real module's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system's own questions (__path__, __spec__, ...)
            raise AttributeError(name)
        if name == "conda_name_to_pypi_name":  # what `from conda_lock.lookup import` binds
            return _conda_name_to_pypi_name
        return getattr(real_lookup(), name)


def _conda_name_to_pypi_name(*args: Any, **kwargs: Any) -> Any:
    return real_lookup().conda_name_to_pypi_name(*args, **kwargs)
