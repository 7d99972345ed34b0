"""`gpuenv setup`: detect, resolve (or pick the lab class's lockfile), lock, install, verify,
and remember what was done, so a second run with nothing changed is a quick no-op.

Typed and free of click (`gpuenv.commands.setup` parses and renders):
- options:     what one run is asked for, merged with what earlier runs recorded; --split
- record:      the SetupRecord kept per environment (`<store>/.setup/<name>.json`)
- planning:    the plan and the lockfile for this machine (a lab class's, or one made here)
- pending:     a new lockfile kept aside until its environment is live
- build:       lock, install, verify
- environment: the environment being replaced, its kernel, its activation line
- workflow:    run_setup, start to end
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuenv.setup.record import SetupRecord, read_record
    from gpuenv.setup.workflow import SetupOutcome, SetupRun, run_setup

__all__ = ["SetupOutcome", "SetupRecord", "SetupRun", "read_record", "run_setup"]

_WHERE = {
    "SetupOutcome": "workflow",
    "SetupRun": "workflow",
    "run_setup": "workflow",
    "SetupRecord": "record",
    "read_record": "record",
}


def __getattr__(name: str) -> Any:  # the face loads a module on first use of its names
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'gpuenv.setup' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"gpuenv.setup.{module}"), name)
