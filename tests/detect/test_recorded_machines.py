"""Machines recorded by scripts/gpu-check.sh (tests/fixtures/detect/NAME/recording.json): today's
parsers must read each recording as detect read it on that machine.

Until a GPU machine has been recorded and promoted (docs/gpu-check.md), there is nothing to
replay and the test reports itself skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from detect_fakes import FIXTURES

from gpuenv.gpucheck.promote import replay

RECORDED = sorted(p.parent for p in FIXTURES.glob("*/recording.json"))


@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_recording_replays_as_detected(folder: Path) -> None:
    assert (folder / "SOURCE").is_file(), "every fixture folder says where it came from"
    assert replay(folder) == []
