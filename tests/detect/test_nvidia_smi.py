from __future__ import annotations

import time
from pathlib import Path

import pytest
from detect_fakes import (
    CURRENT,
    GARBAGE,
    HANGS,
    MISMATCH,
    NO_DRIVER,
    R470,
    SMI,
    TWO_GPUS,
    fake_lookup,
)

from gpuenv.detect import detect_gpus, nvidia_smi
from gpuenv.detect._run import ProbeError

FIELDS = nvidia_smi.FIELDS
NO_CC = tuple(f for f in FIELDS if f != "compute_cap")


def test_parse_current_driver_query() -> None:
    driver, gpus = nvidia_smi.parse_query_csv(
        (SMI / "rtx4070-566.36.query.csv").read_text(), FIELDS
    )
    assert driver == "566.36"
    (g,) = gpus
    assert (g.index, g.name, g.compute_capability) == (
        0,
        "NVIDIA GeForce RTX 4070 Laptop GPU",
        "8.9",
    )
    assert (g.pci_id, g.memory_mib, g.source) == ("10de:2860", 8188, "nvidia-smi")


def test_parse_two_gpus_with_not_available_fields() -> None:
    driver, gpus = nvidia_smi.parse_query_csv(
        (SMI / "titanv-rtx5880.query.csv").read_text(), FIELDS
    )
    assert driver == "570.86.15"
    assert [(g.index, g.name, g.compute_capability) for g in gpus] == [
        (0, "NVIDIA TITAN V", "7.0"),
        (1, "NVIDIA RTX 5880 Ada Generation", "8.9"),
    ]
    assert all(g.pci_id is None and g.memory_mib is None for g in gpus)


@pytest.mark.parametrize(
    "fixture",
    ["titanv-rtx5880.real.csv", "banner-gtx680.txt", "no-driver.txt", "r470-invalid-field.txt"],
)
def test_parse_rejects_what_is_not_our_query(fixture: str) -> None:
    with pytest.raises(ProbeError):
        nvidia_smi.parse_query_csv((SMI / fixture).read_text(), FIELDS)


def test_comma_in_name_is_glued_back() -> None:
    _, (g,) = nvidia_smi.parse_query_csv(
        "0, Tesla K80, rev 2, 0x102D10DE, 11441, 470.82.01\n", NO_CC
    )
    assert g.name == "Tesla K80, rev 2" and g.pci_id == "10de:102d"


@pytest.mark.parametrize(
    ("fixture", "cuda"),
    [
        ("rtx4070-566.36.q.txt", "12.7"),
        ("gtx780-450.66.q.txt", "11.0"),
        ("rtx4090-535.86.05.q.xml", "12.2"),
        ("geforce410m-390.157.q.xml", None),
        ("banner-gtx680.txt", None),
    ],
)
def test_cuda_version_from_q_text_and_xml(fixture: str, cuda: str | None) -> None:
    assert nvidia_smi.parse_cuda_version((SMI / fixture).read_text()) == cuda


def test_rejected_field() -> None:
    assert nvidia_smi.rejected_field((SMI / "r470-invalid-field.txt").read_text()) == "compute_cap"
    assert nvidia_smi.rejected_field((SMI / "no-driver.txt").read_text()) is None


def test_probe_current_driver(fake_smi, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = fake_smi(CURRENT)
    facts = nvidia_smi.probe(5, "Linux", tmp_path, env)
    assert facts.driver is not None
    assert (facts.driver.version, facts.driver.cuda) == ("566.36", "12.7")
    assert [g.compute_capability for g in facts.gpus] == ["8.9"]


def test_probe_r470_retries_without_compute_cap(fake_smi, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = fake_smi(R470)
    facts = detect_gpus("Linux", 5, tmp_path, env, fake_lookup)
    assert facts.driver is not None and facts.driver.version == "450.66"
    assert facts.driver.cuda == "11.0"
    (g,) = facts.gpus
    assert g.name == "GeForce GTX 780" and g.compute_capability == "3.5"
    assert g.source == "nvidia-smi; compute capability from gpuenv knowledge base (by name)"
    assert any("compute_cap" in n for n in facts.notes)


def test_probe_two_gpus(fake_smi, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    facts = detect_gpus("Linux", 5, tmp_path, fake_smi(TWO_GPUS), fake_lookup)
    assert [g.index for g in facts.gpus] == [0, 1]
    assert [g.compute_capability for g in facts.gpus] == ["7.0", "8.9"]
    assert facts.driver is not None and facts.driver.version == "570.86.15"


@pytest.mark.parametrize(
    ("rules", "expect"),
    [
        (NO_DRIVER, "exit status 9): NVIDIA-SMI has failed because it couldn't communicate"),
        (MISMATCH, "exit status 18): Failed to initialize NVML: Driver/library version mismatch"),
        (GARBAGE, "nvidia-smi printed an unexpected line"),
    ],
)
def test_probe_failures_become_notes(fake_smi, tmp_path: Path, rules, expect: str) -> None:  # type: ignore[no-untyped-def]
    env = fake_smi(rules)
    with pytest.raises(ProbeError, match=None) as info:
        nvidia_smi.probe(5, "Linux", tmp_path, env)
    assert expect in str(info.value)
    facts = detect_gpus("Linux", 5, tmp_path, env, fake_lookup)  # empty root: no /proc, /sys
    assert facts.driver is None and facts.gpus == ()
    assert any(expect in n for n in facts.notes)
    assert facts.notes[-1] == "no NVIDIA GPU found"


def test_probe_hanging_is_cut_by_timeout(fake_smi, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = fake_smi(HANGS)
    start = time.monotonic()
    with pytest.raises(ProbeError, match=r"did not answer within 0\.5s"):
        nvidia_smi.probe(0.5, "Linux", tmp_path, env)
    assert time.monotonic() - start < 3


def test_find_nvidia_smi_wsl_location(tmp_path: Path) -> None:
    exe = tmp_path / "usr/lib/wsl/lib/nvidia-smi"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert nvidia_smi.find_nvidia_smi("Linux", tmp_path, {"PATH": ""}) == str(exe)
    assert nvidia_smi.find_nvidia_smi("Linux", tmp_path / "nothing", {"PATH": ""}) is None


def test_find_nvidia_smi_windows_locations(tmp_path: Path) -> None:
    nvsmi = tmp_path / "Program Files" / "NVIDIA Corporation" / "NVSMI" / "nvidia-smi.exe"
    nvsmi.parent.mkdir(parents=True)
    nvsmi.write_text("")
    nvsmi.chmod(0o755)
    env = {
        "PATH": "",
        "WINDIR": str(tmp_path / "Windows"),
        "ProgramFiles": str(tmp_path / "Program Files"),
    }
    assert nvidia_smi.find_nvidia_smi("Windows", tmp_path, env) == str(nvsmi)
