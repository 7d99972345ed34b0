"""Machines recorded by scripts/gpu-check.sh (tests/fixtures/detect/NAME/recording.json): today's
parsers must read each recording as detect read it on that machine.

Until a GPU machine is recorded and promoted (docs/gpu-check.md), one recording assembled from
public nvidia-smi output stands in (tests/fixtures/detect/rtx4070-laptop-566.36/SOURCE says
where each file comes from), so replay itself is tested: it agrees with what detect said, and
it reports a disagreement when detect's record is altered.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from detect_fakes import FIXTURES

from gpuenv.gpucheck.promote import replay

RECORDED = sorted(p.parent for p in FIXTURES.glob("*/recording.json"))
ASSEMBLED = FIXTURES / "rtx4070-laptop-566.36"


def test_at_least_one_recording_is_replayed() -> None:
    assert ASSEMBLED in RECORDED


@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_recording_replays_as_detected(folder: Path) -> None:
    assert (folder / "SOURCE").is_file(), "every fixture folder says where it came from"
    assert replay(folder) == []


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("driver", {"version": "566.14", "cuda": "12.7"}, "driver 566.36 parsed"),
        ("driver", {"version": "566.36", "cuda": "12.6"}, "CUDA 12.7 parsed"),
        ("name", "NVIDIA GeForce RTX 4070", "name"),
        ("pci_id", "10de:2786", "pci_id"),
        ("memory_mib", 12282, "memory_mib"),
        ("compute_capability", "8.6", "compute_capability"),
    ],
)
def test_replay_reports_what_detect_said_otherwise(
    tmp_path: Path, field: str, value: object, needle: str
) -> None:
    folder = tmp_path / ASSEMBLED.name
    shutil.copytree(ASSEMBLED, folder)
    path = folder / "machine.nvml-off.json"
    machine = json.loads(path.read_text())
    if field == "driver":
        machine["driver"] = value
    else:
        machine["gpus"][0][field] = value
    path.write_text(json.dumps(machine))
    found = replay(folder)
    assert len(found) == 1 and needle in found[0] and found[0].startswith("nvidia-smi"), found
