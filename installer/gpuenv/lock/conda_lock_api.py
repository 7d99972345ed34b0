"""conda-lock's lockfile modules, without its package `__init__`.

`import conda_lock` imports conda-lock's whole command line (its solvers, conda and PyPI
back-ends): more than a second, for reading and writing a YAML file. gpuenv needs only
`conda_lock.lockfile` and `conda_lock.models`, which do not use the package's `__init__`, so the
package is registered as a bare namespace over its real folder before they are imported.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any


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
