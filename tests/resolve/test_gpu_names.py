"""Names sold with several chips.

Expected answers come from NVIDIA's own name tables (supported-gpus.json of the 470 driver
branch; developer.nvidia.com/cuda-gpus and cuda-legacy-gpus), not from recipes/:
- 'GeForce GTX 750 Ti' is listed by NVIDIA for PCI 10de:1380 (desktop) and 1392/139b/139d
  (laptops), all GM107, Maxwell, compute capability 5.0. pci.ids also names a Kepler GK106
  device 10de:11c7 'GeForce GTX 750 Ti', which NVIDIA's tables do not list (GK106 is 3.0).
- 'GeForce GT 730' is listed by NVIDIA for GF108 (10de:0f02, Fermi 2.1), GK107 (10de:0fc9,
  Kepler 3.0) and GK208B (10de:1287, Kepler 3.5): equally confirmed, so no guess is possible.
"""

from __future__ import annotations

import pytest

from gpuenv.resolve import TargetError, resolve
from gpuenv.resolve.target import build_target


def test_the_chip_nvidia_confirms_is_planned_with_a_warning(kb, describe) -> None:
    machine = describe("GeForce GTX 750 Ti", "550.54.14", "linux")
    assert machine.gpus[0].compute_capability == "5.0"
    assert machine.gpus[0].pci_id is None  # the name does not pin the chip down
    plan = resolve(machine, ["torch"], kb=kb)
    assert plan.gpu is not None and plan.gpu["compute_capability"] == "5.0"
    warning = next(w for w in plan.warnings if "GTX 750 Ti" in w)
    assert "GK106" in warning and "3.0" in warning and "10de:11c7" in warning
    assert "--gpu 3.0" in warning and "--gpu 10de:11c7" in warning
    assert "--gpu 3.5" not in warning  # neither chip


def test_a_pci_id_pins_the_chip_and_silences_the_warning(kb, describe) -> None:
    retail = describe("10de:1380", "550.54.14", "linux")
    assert retail.gpus[0].compute_capability == "5.0"
    assert retail.gpus[0].pci_id == "10de:1380"
    plan = resolve(retail, ["torch"], kb=kb)
    assert not any("GK106" in w for w in plan.warnings)
    kepler = describe("10de:11c7", "470.256.02", "linux")
    assert kepler.gpus[0].compute_capability == "3.0"


@pytest.mark.parametrize("spelling", ["10DE:1380", "1380", "0x10de:0x1380"])
def test_pci_id_spellings(describe, spelling: str) -> None:
    assert describe(spelling, "550.54.14", "linux").gpus[0].compute_capability == "5.0"


@pytest.mark.parametrize("text", ["10de:ffff", "10de:../x", "10de:13800"])
def test_unknown_or_malformed_pci_ids_are_refused(describe, text: str) -> None:
    with pytest.raises(TargetError):
        describe(text, "550.54.14", "linux")


def test_equally_confirmed_chips_are_an_error_naming_only_real_candidates(describe) -> None:
    with pytest.raises(TargetError) as info:
        describe("GeForce GT 730", "470.256.02", "linux")
    message = str(info.value)
    for flag in ("--gpu 2.1", "--gpu 3.0", "--gpu 3.5"):
        assert flag in message
    for pci in ("10de:0f02", "10de:0fc9", "10de:1287"):
        assert pci in message
    assert "--gpu 6.1" not in message and "--gpu 5.0" not in message


def test_the_cli_plans_the_confirmed_chip(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "--gpu", "GeForce GTX 750 Ti", "--driver", "550.54.14")
    assert result.returncode == 0, result.stderr
    assert "sm_50" in result.stdout and "Traceback" not in result.stderr
    ambiguous = gpuenv_cli("resolve", "--gpu", "GeForce GT 730", "--driver", "470.256.02")
    assert ambiguous.returncode == 2 and "Traceback" not in ambiguous.stderr
    assert "--gpu 3.5" in ambiguous.stderr


def test_a_detected_gpu_with_its_pci_id_gets_no_name_warning(kb) -> None:
    from gpuenv.machine import Driver, Gpu, Machine, OSInfo

    machine = Machine(
        os=OSInfo("linux"),
        arch="x86_64",
        platform="linux-64",
        driver=Driver("550.54.14"),
        gpus=(Gpu("NVIDIA GeForce GTX 750 Ti", None, pci_id="10de:1380"),),
    )
    target = build_target(machine, kb)
    assert target.cc == "5.0" and not target.gpu_warnings
