"""Test helpers for detection: fixture paths, a fake `nvidia-smi`, a fake knowledge base.

Imported by name (tests/detect is put on sys.path by conftest.py: --import-mode=importlib).
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "detect"
SMI = FIXTURES / "nvidia-smi"

FAKE_SMI = """#!{python}
# A stand-in for nvidia-smi: the first rule whose "match" strings all occur in the arguments
# prints its recorded file and exits with its status.
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "scenario.json")) as f:
    rules = json.load(f)
args = " ".join(sys.argv[1:])
for rule in rules:
    if all(m in args for m in rule["match"]):
        time.sleep(rule.get("sleep", 0))
        if rule.get("file"):
            with open(rule["file"]) as f:
                sys.stdout.write(f.read())
        sys.stdout.flush()
        sys.exit(rule.get("exit", 0))
sys.stdout.write("Invalid combination of input arguments.\\n")
sys.exit(2)
"""

# Scenarios: rules in order. "query-cc" matches the first query (with compute_cap).
CURRENT = [
    {"match": ["--query-gpu", "compute_cap"], "file": str(SMI / "rtx4070-566.36.query.csv")},
    {"match": ["-q"], "file": str(SMI / "rtx4070-566.36.q.txt")},
]
R470 = [
    {
        "match": ["--query-gpu", "compute_cap"],
        "file": str(SMI / "r470-invalid-field.txt"),
        "exit": 2,
    },
    {"match": ["--query-gpu"], "file": str(SMI / "gtx780-450.66.query.csv")},
    {"match": ["-q"], "file": str(SMI / "gtx780-450.66.q.txt")},
]
TWO_GPUS = [
    {"match": ["--query-gpu"], "file": str(SMI / "titanv-rtx5880.query.csv")},
    {"match": ["-q"], "file": str(SMI / "rtx4090-535.86.05.q.xml")},
]
NO_DRIVER = [{"match": [], "file": str(SMI / "no-driver.txt"), "exit": 9}]
MISMATCH = [{"match": [], "file": str(SMI / "version-mismatch.txt"), "exit": 18}]
GARBAGE = [{"match": [], "file": str(SMI / "banner-gtx680.txt")}]
HANGS = [{"match": [], "sleep": 30}]


def write_fake_smi(bin_dir: Path, rules: list[dict[str, Any]]) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "scenario.json").write_text(json.dumps(rules))
    exe = bin_dir / "nvidia-smi"
    exe.write_text(FAKE_SMI.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def fake_lookup(name: str, pci: str | None) -> Any:
    """A stand-in for the knowledge base: a few rows, by PCI id first, then by name."""
    from gpuenv.detect._facts import KbHit

    by_pci = {"10de:1db6": ("7.0", "Tesla V100-PCIE-32GB"), "10de:17c8": ("5.2", "GTX 980 Ti")}
    by_name = {"GeForce GTX 780": "3.5"}
    if pci in by_pci:
        return KbHit(by_pci[pci][0], "PCI id", by_pci[pci][1])
    if name in by_name:
        return KbHit(by_name[name], "name", name)
    return None
