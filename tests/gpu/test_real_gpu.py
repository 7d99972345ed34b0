"""The check on a real NVIDIA GPU (marked gpu: skipped where nvidia-smi lists none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv.gpucheck.promote import promote, replay
from gpuenv.gpucheck.run import Result, run_check

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return run_check(tmp_path_factory.mktemp("gpu") / "out", budget_s=280)


def test_every_source_answered(checked: Result) -> None:
    assert checked.has_gpu
    names = set(checked.recording.files)
    assert {"nvml.json", "nvidia-smi.query.csv", "nvidia-smi.q.xml"} <= names, (
        checked.recording.notes
    )


def test_detect_finds_the_gpus_with_their_facts(checked: Result) -> None:
    machine = checked.machine or {}
    assert machine.get("driver") and machine["driver"]["cuda"], machine
    assert machine["gpus"], machine
    for gpu in machine["gpus"]:
        assert gpu["compute_capability"] and gpu["pci_id"] and gpu["memory_mib"], gpu


def test_sources_and_knowledge_base_agree(checked: Result) -> None:
    assert [f.line() for f in checked.findings if f.problem] == []


def test_each_framework_resolves_to_a_gpu_plan(checked: Result) -> None:
    for fw, plan in checked.plans.items():
        assert plan is not None, fw
        assert plan["accelerator"] == "cuda", (fw, plan.get("warnings"))


def test_installed_frameworks_use_the_gpu(checked: Result) -> None:
    if not checked.verified:
        pytest.skip("no interpreter here has torch, tensorflow or jax")
    for interp, report in checked.verified:
        assert report is not None, interp
        assert report["ok"], json.dumps(report, indent=2)


def test_recording_replays_through_the_parsers(checked: Result, tmp_path: Path) -> None:
    assert replay(promote(checked.out, "this-machine", tmp_path)) == []
