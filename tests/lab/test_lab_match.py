"""`gpuenv lab match`: the class of a lab a machine belongs to (gpuenv's own rules), and the
class's committed lockfile; what the fleet role asks on the controller about each host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv.recipes import KnowledgeBase
from lockdata import in_process

LAB = """
[lab]
lockfiles = "locks"

[stack]
requirements = ["jax"]

[[class]]
name = "ada"
os = "linux"
compute_capability = "8.9"
driver = "550.54.14"

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.toml"
    path.write_text(LAB)
    (tmp_path / "locks").mkdir()
    for name in ("ada", "cpu"):
        (tmp_path / "locks" / f"{name}.conda-lock.yml").write_text("# stand-in\n")
    return path


def machine_file(tmp_path: Path, describe, **kw: str) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / "machine.json"
    path.write_text(describe(**kw).dumps())
    return path


def test_a_gpu_machine_gets_its_gpu_class(lab: Path, tmp_path: Path, describe) -> None:  # type: ignore[no-untyped-def]
    machine = machine_file(tmp_path, describe, gpu="8.9", driver="560.35.03")
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(machine), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["ok"] is True and doc["command"] == "lab match"
    assert (doc["machine_class"], doc["has_gpu"]) == ("ada", True)
    assert doc["lockfile"] == str(tmp_path / "locks" / "ada.conda-lock.yml")
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(machine))
    assert code == 0 and out == f"ada: {tmp_path / 'locks' / 'ada.conda-lock.yml'}\n"


@pytest.mark.parametrize(
    "machine",
    [
        {"gpu": "8.6", "driver": "560.35.03"},  # a GPU no class covers: the CPU class
        {"gpu": "8.9", "driver": "535.54.03"},  # below the class's driver floor
        {},
    ],
)
def test_other_linux_machines_get_the_cpu_class(
    lab: Path,
    tmp_path: Path,
    describe,  # type: ignore[no-untyped-def]
    machine: dict[str, str],
) -> None:
    path = machine_file(tmp_path, describe, **machine)
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(path), "--json")
    assert code == 0, err
    assert json.loads(out)["machine_class"] == "cpu"


def test_no_class_fits(lab: Path, tmp_path: Path, describe) -> None:  # type: ignore[no-untyped-def]
    machine = machine_file(tmp_path, describe, gpu="8.9", driver="560.94", os_name="windows")
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(machine), "--json")
    assert code == 2
    assert "this machine fits no class of" in err
    assert "ada: it is for linux linux-64, this machine is windows win-64" in err
    assert json.loads(out)["ok"] is False


def test_a_class_without_its_lockfile_is_an_error_that_says_how_to_make_it(
    lab: Path,
    tmp_path: Path,
    describe,  # type: ignore[no-untyped-def]
) -> None:
    (tmp_path / "locks" / "ada.conda-lock.yml").unlink()
    machine = machine_file(tmp_path, describe, gpu="8.9", driver="560.35.03")
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(machine), "--json")
    assert code == 2
    missing = tmp_path / "locks" / "ada.conda-lock.yml"
    message = json.loads(out)["error"]
    assert message.startswith(f"lab class ada has no lockfile: {missing} does not exist")
    assert f"gpuenv lock --lab {lab} --class ada" in message and message in err
    # the class is not quietly swapped for one that has a lockfile
    assert "cpu" not in message


def test_the_older_lockfile_name_counts(lab: Path, tmp_path: Path, describe) -> None:  # type: ignore[no-untyped-def]
    old = tmp_path / "locks" / "ada.lock.yml"
    (tmp_path / "locks" / "ada.conda-lock.yml").rename(old)
    machine = machine_file(tmp_path, describe, gpu="8.9", driver="560.35.03")
    code, out, err = in_process("lab", "match", str(lab), "--machine", str(machine), "--json")
    assert code == 0, err
    assert json.loads(out)["lockfile"] == str(old)


def test_a_broken_machine_file_is_refused(lab: Path, tmp_path: Path, kb: KnowledgeBase) -> None:
    bad = tmp_path / "machine.json"
    bad.write_text('{"os": "linux"')
    code, _out, err = in_process("lab", "match", str(lab), "--machine", str(bad))
    assert code != 0 and "Traceback" not in err and err.strip()


def test_lockfiles_lists_every_class_and_whether_its_lockfile_is_there(
    lab: Path, tmp_path: Path
) -> None:
    (tmp_path / "locks" / "cpu.conda-lock.yml").unlink()
    code, out, err = in_process("lab", "lockfiles", str(lab), "--json")
    assert code == 0, err
    locks = tmp_path / "locks"
    assert json.loads(out)["classes"] == [
        {"machine_class": "ada", "lockfile": str(locks / "ada.conda-lock.yml"), "exists": True},
        {"machine_class": "cpu", "lockfile": str(locks / "cpu.conda-lock.yml"), "exists": False},
    ]
    code, out, err = in_process("lab", "lockfiles", str(lab))
    assert code == 0 and out.splitlines() == [
        f"ada: {locks / 'ada.conda-lock.yml'}",
        f"cpu: {locks / 'cpu.conda-lock.yml'} (missing)",
    ]
