from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from detect_fakes import FIXTURES, fake_lookup

from gpuenv.detect import detect_gpus, linux, windows
from gpuenv.detect._run import ProbeError

PROC = FIXTURES / "proc"


@pytest.mark.parametrize(
    ("fixture", "version"),
    [
        ("nvidia-version-384.98.txt", "384.98"),
        ("nvidia-version-565.57.01-open.txt", "565.57.01"),
        ("nvidia-version-jetson-35.3.1.txt", "35.3.1"),
    ],
)
def test_proc_driver_version(fixture: str, version: str) -> None:
    assert linux.parse_proc_driver_version((PROC / fixture).read_text()) == version


def _pci_tree(root: Path) -> None:
    """The three V100s of the lspci output in fixtures/detect/proc/SOURCE, and other devices."""
    devices = {
        "0000:00:00.0": ("0x8086", "0x2020", "0x060000"),  # host bridge
        "0000:03:00.0": ("0x102b", "0x0536", "0x030000"),  # Matrox VGA (BMC)
        "0000:5a:00.0": ("0x10de", "0x1db6", "0x030200"),
        "0000:5e:00.0": ("0x10de", "0x1db6", "0x030200"),
        "0000:62:00.0": ("0x10de", "0x1db6", "0x030200"),
        "0000:63:00.1": ("0x10de", "0x10f0", "0x040300"),  # an NVIDIA HDMI audio function
    }
    for slot, (vendor, device, klass) in devices.items():
        d = root / "sys/bus/pci/devices" / slot
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "device").write_text(device + "\n")
        (d / "class").write_text(klass + "\n")


def test_pci_gpus_from_sys(tmp_path: Path) -> None:
    _pci_tree(tmp_path)
    assert linux.pci_gpus(tmp_path) == (
        ("0000:5a:00.0", "10de:1db6"),
        ("0000:5e:00.0", "10de:1db6"),
        ("0000:62:00.0", "10de:1db6"),
    )


def test_broken_driver_tools_fall_back_to_proc_and_sys(tmp_path: Path) -> None:
    _pci_tree(tmp_path)
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    shutil.copy(PROC / "nvidia-version-384.98.txt", tmp_path / "proc/driver/nvidia/version")
    env = {"PATH": "", "GPUENV_DISABLE_NVML": "1"}
    facts = detect_gpus("Linux", 2, tmp_path, env, fake_lookup)
    assert facts.driver is not None and facts.driver.version == "384.98"
    assert [g.index for g in facts.gpus] == [0, 1, 2]
    g = facts.gpus[0]
    assert (g.name, g.compute_capability, g.pci_id) == ("Tesla V100-PCIE-32GB", "7.0", "10de:1db6")
    assert g.source.endswith("compute capability from gpuenv knowledge base (by PCI id)")
    assert any("NVIDIA driver tools did not answer" in n for n in facts.notes)
    assert any("nvidia-smi not found" in n for n in facts.notes)


def test_nothing_nvidia_on_linux(tmp_path: Path) -> None:
    facts = detect_gpus("Linux", 2, tmp_path, {"PATH": ""}, fake_lookup)
    assert facts.driver is None and facts.gpus == ()
    assert facts.notes[-1] == "no NVIDIA GPU found"


def test_os_release_and_wsl(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    shutil.copy(FIXTURES / "os/debian-12.os-release", tmp_path / "etc/os-release")
    (tmp_path / "proc").mkdir()
    info = linux.os_info(tmp_path, {})
    assert (info.family, info.name, info.version, info.wsl) == (
        "linux",
        "Debian GNU/Linux 12 (bookworm)",
        "12",
        False,
    )
    shutil.copy(PROC / "version-wsl2.txt", tmp_path / "proc/version")
    assert linux.os_info(tmp_path, {}).wsl is True
    shutil.copy(PROC / "version-wsl1.txt", tmp_path / "proc/version")
    assert linux.is_wsl(tmp_path, {}) is True
    assert linux.is_wsl(tmp_path / "none", {"WSL_DISTRO_NAME": "Ubuntu"}) is True
    assert linux.is_wsl(tmp_path / "none", {}) is False


def test_wsl_without_driver_says_where_the_driver_lives(tmp_path: Path) -> None:
    facts = detect_gpus("Linux", 2, tmp_path, {"PATH": ""}, fake_lookup, wsl=True)
    assert any("WSL2" in n for n in facts.notes)


def test_glibc_here() -> None:
    v = linux.glibc_version()
    assert v is not None and v.startswith("2.")


@pytest.mark.parametrize(
    ("windows_version", "nvidia"),
    [
        ("31.0.15.5186", "551.86"),
        ("22.21.13.8253", "382.53"),
        ("30.0.14.7212", "472.12"),
        ("27.21.14.5671", "456.71"),
        ("32.0.15.6094", "560.94"),
        ("10.18.13.6881", "368.81"),
        ("20.19.15.5058", "550.58"),  # an Intel version converts too: callers only pass NVIDIA's
        ("", None),
        ("31.0.15", None),
        ("a.b.c.d", None),
    ],
)
def test_windows_driver_version(windows_version: str, nvidia: str | None) -> None:
    assert windows.nvidia_driver_version(windows_version) == nvidia


@pytest.mark.parametrize(
    ("build", "name"), [(19045, "Windows 10"), (22000, "Windows 11"), (26100, "Windows 11")]
)
def test_windows_10_or_11(build: int, name: str) -> None:
    assert windows.windows_name(build) == name


def test_video_controllers() -> None:
    facts = windows.parse_video_controllers(
        (FIXTURES / "windows/video-controllers.json").read_text()
    )
    (g,) = facts.gpus
    assert (g.name, g.pci_id, g.compute_capability, g.source) == (
        "NVIDIA GeForce GTX 980 Ti",
        "10de:17c8",
        None,
        "Win32_VideoController",
    )
    assert facts.driver is not None and facts.driver.version == "382.53"


def test_video_controller_single_object_and_failures() -> None:
    one = json.dumps(
        {
            "Name": "NVIDIA GeForce GTX 980 Ti",
            "PNPDeviceID": "PCI\\VEN_10DE&DEV_17C8&SUBSYS_49983842&REV_A1\\4&14144E6&0&00E4",
            "DriverVersion": "22.21.13.8253",
            "AdapterRAM": 4293918720,
        }
    )
    facts = windows.parse_video_controllers(one)
    assert facts.gpus[0].pci_id == "10de:17c8" and facts.gpus[0].memory_mib == 4095
    with pytest.raises(ProbeError, match="no NVIDIA GPU"):
        windows.parse_video_controllers(
            '{"Name": "Intel(R) UHD Graphics", "PNPDeviceID": "PCI\\\\VEN_8086&DEV_9BC4"}'
        )
    with pytest.raises(ProbeError, match="not JSON"):
        windows.parse_video_controllers("Get-CimInstance : Access denied")
