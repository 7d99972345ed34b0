"""Lab files: classes, matching a machine to its class, the admin's lock/--check loop, setup."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from gpuenv.lab.load import LabError, load_lab
from gpuenv.machine import Driver, Gpu, Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from installrepos import gpuenv

LAB = """
[lab]
name = "test lab"
lockfiles = "locks"

[stack]
requirements = ["{req}"]

[[class]]
name = "pascal"
os = "linux"
compute_capability = "6.0-6.1"
driver = "535.183.01"

[[class]]
name = "ampere"
os = "linux"
compute_capability = "8.6"
driver = "550.54.14"

[[class]]
name = "laptop"
os = "windows"
gpu = "GeForce 940M"
driver = "457.49"

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


def write_lab(folder: Path, req: str = "jax<0.4.32") -> Path:
    path = folder / "lab.toml"
    path.write_text(LAB.replace("{req}", req))
    return path


def linux(gpu: str | None, driver: str | None, kb) -> Machine:  # type: ignore[no-untyped-def]
    return describe_machine(kb, gpu=gpu, driver=driver, os_name="linux", arch="x86_64")


def test_classes_cover_their_ranges(tmp_path: Path, kb) -> None:
    lab = load_lab(write_lab(tmp_path), kb)
    pascal = lab.find_class("pascal")
    assert pascal.ccs == ("6.0", "6.1") and pascal.platform == "linux-64"
    assert (
        lab.find_class("laptop").ccs == ("5.0",) and lab.find_class("laptop").platform == "win-64"
    )
    # a range's plan must run on every compute capability in it: one GPU per capability
    assert [g.compute_capability for g in pascal.machine().gpus] == ["6.0", "6.1"]
    # new lockfiles get the name conda tools recognise; one made before keeps its old name
    assert lab.lockfile(pascal) == (tmp_path / "locks" / "pascal.conda-lock.yml").resolve()
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "pascal.lock.yml").write_text("")
    assert lab.lockfile(pascal) == (tmp_path / "locks" / "pascal.lock.yml").resolve()


@pytest.mark.parametrize(
    ("gpu", "driver", "expected"),
    [
        ("GeForce GTX 1080 Ti", "550.54.14", "pascal"),
        ("GeForce RTX 3090", "560.35.03", "ampere"),
        (None, None, "cpu"),
    ],
)
def test_machines_find_their_class(
    gpu: str | None, driver: str | None, expected: str, tmp_path: Path, kb
) -> None:
    lab = load_lab(write_lab(tmp_path), kb)
    cls, _ = lab.match(linux(gpu, driver, kb))
    assert cls is not None and cls.name == expected


def test_a_machine_below_every_driver_floor_is_told_why(tmp_path: Path, kb) -> None:
    lab = load_lab(write_lab(tmp_path), kb)
    cls, why = lab.match(linux("GeForce GTX 1080 Ti", "470.256.02", kb))
    # the CPU class still fits; the GPU class says what is missing
    assert cls is not None and cls.name == "cpu"
    assert any("pascal" in w and "535.183.01" in w and "470.256.02" in w for w in why)


def test_a_machine_no_class_fits_is_told_which_is_missing(tmp_path: Path, kb) -> None:
    lab = load_lab(write_lab(tmp_path), kb)
    mac = describe_machine(kb, gpu=None, driver=None, os_name="macos", arch="arm64")
    cls, why = lab.match(mac)
    assert cls is None and len(why) == 4
    hopper = Machine(
        os=OSInfo("linux"),
        arch="x86_64",
        platform="linux-64",
        driver=Driver("570.86.15"),
        gpus=(Gpu("H100 PCIe", "9.0"),),
    )
    cls, why = lab.match(hopper)
    assert cls is not None and cls.name == "cpu"  # only the CPU class fits a Hopper machine here
    assert any("covers compute capability 8.6" in w and "9.0" in w for w in why)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[stack]\nrequirements = []\n[[class]]\nname="a"\nos="linux"\n', "requirements is empty"),
        ('[stack]\nrequirements = ["torch"]\n', "no [[class]]"),
        (
            '[stack]\nrequirements = ["torch"]\n[[class]]\nname="a"\nos="beos"\n',
            "os must be one of",
        ),
        (
            '[stack]\nrequirements = ["torch"]\n[[class]]\nname="a"\nos="linux"\ncompute_capability="8.6"\n',
            "driver floor",
        ),
        (
            '[stack]\nrequirements = ["torch"]\n[[class]]\nname="a"\nos="linux"\ngpu="GeForce 9999"\ndriver="550.54.14"\n',
            "unknown GPU",
        ),
    ],
)
def test_bad_lab_files(text: str, message: str, tmp_path: Path, kb) -> None:
    path = tmp_path / "lab.toml"
    path.write_text(text)
    with pytest.raises(LabError, match=re.escape(message)):
        load_lab(path, kb)


def test_admin_loop_lock_check_change_relock(tmp_path: Path) -> None:
    lab = write_lab(tmp_path)
    # the Windows class cannot be locked from here against a Linux-only local index: lock the others
    classes = ["--class", "pascal", "--class", "cpu"]
    locked = gpuenv("lock", "--lab", str(lab), *classes)
    assert locked.returncode == 0, locked.stderr
    assert "locked pascal" in locked.stdout and "locked cpu" in locked.stdout
    check = gpuenv("lock", "--lab", str(lab), *classes, "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    lab.write_text(lab.read_text().replace("jax<0.4.32", "jax<0.4.31"))
    stale = gpuenv("lock", "--lab", str(lab), *classes, "--check")
    assert stale.returncode == 1
    assert (
        re.search(r"STALE +pascal", stale.stdout)
        and "0.4.31" in stale.stdout
        and "0.4.30" in stale.stdout
    )
    assert gpuenv("lock", "--lab", str(lab), *classes).returncode == 0
    assert gpuenv("lock", "--lab", str(lab), *classes, "--check").returncode == 0


def test_setup_dry_run_picks_the_class_of_this_machine(tmp_path: Path) -> None:
    lab = write_lab(tmp_path)
    result = gpuenv("setup", "--lab", str(lab), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "lab class cpu" in result.stderr
    assert "dry run" in result.stdout and not (tmp_path / "home" / "envs" / "default").exists()


def test_setup_with_a_lab_no_class_fits(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text(
        textwrap.dedent("""
        [stack]
        requirements = ["jax"]
        [[class]]
        name = "only-windows"
        os = "windows"
        gpu = "none"
    """)
    )
    result = gpuenv("setup", "--lab", str(path), "--dry-run")
    assert result.returncode == 2
    assert "fits no class" in result.stderr and "only-windows" in result.stderr


JETSON_LAB = """
[lab]
name = "robots"
lockfiles = "locks"

[stack]
requirements = ["torch"]

[[class]]
name = "orin"
os = "linux"
arch = "aarch64"
gpu = "Jetson AGX Orin"
driver = "r36.4"
"""


@pytest.mark.parametrize(
    ("driver", "fits", "why"),
    [
        ("r36.4.3", True, ""),  # JetPack 6.2's Jetson Linux release is 36.4 or newer
        ("36.5.0", True, ""),
        ("35.3.1", False, "35.3.1"),  # JetPack 5: older than the class's floor
        ("540.4.0", False, "not of that kind"),  # nvidia-smi's number has no order with r36.4
    ],
)
def test_a_jetson_class_floor_is_a_jetson_linux_release(
    tmp_path: Path, kb, driver, fits, why
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "lab.toml"
    path.write_text(JETSON_LAB)
    lab = load_lab(path, kb)
    machine = describe_machine(
        kb, gpu="Jetson AGX Orin", driver=driver, os_name="linux", arch="aarch64"
    )
    cls, reasons = lab.match(machine)
    assert (cls is not None) is fits, reasons
    assert fits or any(why in r for r in reasons), reasons


def test_a_lab_driver_is_still_checked(tmp_path: Path, kb) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "lab.toml"
    path.write_text(JETSON_LAB.replace('driver = "r36.4"', 'driver = "r36.4.x"'))
    with pytest.raises(LabError, match="driver"):
        load_lab(path, kb)


def test_jetson_linux_releases_compare_by_their_parts() -> None:
    from gpuenv.machine import driver_at_least

    assert driver_at_least("r36.4", "36.4.0") is True  # r36.4 is 36.4.0
    assert driver_at_least("r36.3.9", "r36.4") is False
    assert driver_at_least("550.54.14", "535.183.01") is True
    assert driver_at_least("r36.4", "535.183.01") is None
