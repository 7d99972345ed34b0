"""Fleet tests: this folder's helpers (fleet_hosts, fleet_lab) and tests/detect's stand-in
nvidia-smi on sys.path (--import-mode=importlib leaves them off)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "detect"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
