"""Which frameworks this environment has (found, not imported), as one JSON line. Python 3.8+."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuenv.verify.probes import _probe_common as common
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _probe_common as common

FRAMEWORKS = ("torch", "tensorflow", "jax")


def probe(result: common.Result) -> None:
    result["import_ok"] = True
    result["installed"] = [m for m in FRAMEWORKS if importlib.util.find_spec(m) is not None]


if __name__ == "__main__":
    common.run("env", probe)
