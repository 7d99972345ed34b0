"""A Jetson's GPU and driver from its device tree and L4T release (tests/fixtures/detect/tegra/
SOURCE names where each string comes from): its GPU is on no PCI bus, and JetPack 5 has no
nvidia-smi, so without this probe a Jetson was detected as having no GPU."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from detect_fakes import FIXTURES, fake_lookup

from gpuenv.detect import detect_gpus, tegra

ORIN = ("nvidia,p3737-0000+p3701-0000", "nvidia,p3701-0000", "nvidia,tegra234")
THOR = ("nvidia,p4071-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264")


def _board(root: Path, compatible: tuple[str, ...], model: str) -> None:
    tree = root / "proc/device-tree"
    tree.mkdir(parents=True)
    (tree / "compatible").write_bytes(b"\0".join(s.encode() for s in compatible) + b"\0")
    (tree / "model").write_bytes(model.encode() + b"\0")


def _no_driver_tools() -> dict[str, str]:
    return {"PATH": "", "GPUENV_DISABLE_NVML": "1"}


def test_jetpack5_orin_from_device_tree_and_proc(tmp_path: Path) -> None:
    _board(tmp_path, ORIN, "NVIDIA Jetson AGX Orin Developer Kit")
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    shutil.copy(
        FIXTURES / "proc/nvidia-version-jetson-35.3.1.txt", tmp_path / "proc/driver/nvidia/version"
    )
    facts = detect_gpus("Linux", 2, tmp_path, _no_driver_tools(), fake_lookup)
    assert facts.driver is not None and facts.driver.version == "35.3.1"
    [gpu] = facts.gpus
    assert (gpu.name, gpu.compute_capability) == ("Jetson AGX Orin", "8.7")
    assert "nvidia,tegra234" in gpu.source
    assert not any("reinstall" in n for n in facts.notes)  # not a broken desktop driver


def test_thor_driver_from_nv_tegra_release(tmp_path: Path) -> None:
    _board(tmp_path, THOR, "NVIDIA Jetson AGX Thor Developer Kit")
    (tmp_path / "etc").mkdir()
    shutil.copy(
        FIXTURES / "tegra/nv_tegra_release-thor-38.2.0.txt", tmp_path / "etc/nv_tegra_release"
    )
    facts = detect_gpus("Linux", 2, tmp_path, _no_driver_tools(), fake_lookup)
    assert facts.driver is not None and facts.driver.version == "r38.2.0"
    assert [(g.name, g.compute_capability) for g in facts.gpus] == [("Jetson AGX Thor", "11.0")]


def test_not_a_jetson_falls_through(tmp_path: Path) -> None:
    _board(tmp_path, ("raspberrypi,5-model-b", "brcm,bcm2712"), "Raspberry Pi 5")
    facts = detect_gpus("Linux", 2, tmp_path, _no_driver_tools(), fake_lookup)
    assert facts.gpus == () and facts.notes[-1] == "no NVIDIA GPU found"
    assert not any("Tegra" in n or "Jetson" in n for n in facts.notes)  # no noise elsewhere


def test_an_unknown_tegra_is_named_not_guessed(tmp_path: Path) -> None:
    _board(tmp_path, ("nvidia,p9999", "nvidia,tegra999"), "NVIDIA Jetson Future")
    facts = detect_gpus("Linux", 2, tmp_path, _no_driver_tools(), fake_lookup)
    assert facts.gpus == ()
    assert any("nvidia,tegra999" in n and "does not record" in n for n in facts.notes)


def test_a_fifo_or_a_flood_is_read_as_nothing_or_bounded(tmp_path: Path) -> None:
    tree = tmp_path / "proc/device-tree"
    tree.mkdir(parents=True)
    os.mkfifo(tree / "compatible")  # would block a plain open() forever
    assert tegra.compatible(tmp_path) == ()
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/nv_tegra_release").write_text("# R36 (release), REVISION: 4.3" + "x" * 10**6)
    assert tegra.l4t_release(tmp_path) == "r36.4.3"
    (tmp_path / "etc/nv_tegra_release").write_text("# R36 (release), REVISION: ../../x")
    assert tegra.l4t_release(tmp_path) is None


def test_a_device_behind_the_model_is_not_read(tmp_path: Path) -> None:
    _board(tmp_path, ORIN, "unused")
    (tmp_path / "proc/device-tree/model").unlink()
    (tmp_path / "proc/device-tree/model").symlink_to("/dev/urandom")
    [gpu] = tegra.probe(tmp_path).gpus
    assert gpu.name == "Jetson Orin"  # the SoC's name, not bytes of a device
