"""Every assumption is printed (issue 18): a machine described without `--driver` (or without
`--python`, or a Linux lock without its glibc) gets a plan for facts gpuenv filled in, and
resolve, explain and lock say which, on stderr and in `--json` ("assumed").

Expected values come from NVIDIA's CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding
Driver Versions" (docs.nvidia.com/cuda/cuda-toolkit-release-notes, tables 2 and 3): CUDA 12.9
GA needs Windows driver >= 576.02 of its own, and CUDA 12.x's minor-version compatibility floor
on Windows is >= 527.41. CUDA 13.0's release notes drop Maxwell, Pascal and Volta, so CUDA 12.9
is the newest CUDA a GeForce 940M (Maxwell, sm_50) runs.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]
LAPTOP = ["--os", "windows", "--arch", "x86_64", "--gpu", "GeForce 940M"]


def test_resolve_says_which_driver_it_assumed_and_what_the_plan_needs(
    gpuenv_cli: Run,
) -> None:
    done = gpuenv_cli("resolve", "torch", *LAPTOP)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "no --driver given" in line]
    assert len(notes) == 1, done.stderr
    note = notes[0]
    assert "planned for driver 576.02" in note
    assert "CUDA 12.9" in note and "the newest this GPU can run" not in note
    assert "nvidia-smi" in note and "Device Manager" in note and "pass --driver" in note
    assert "this plan needs driver ≥ 527.41" in note


def test_resolve_json_records_the_assumptions(gpuenv_cli: Run) -> None:
    done = gpuenv_cli("resolve", "torch", *LAPTOP, "--json")
    plan = json.loads(done.stdout)
    assert plan["assumed"] == {"driver": "576.02", "python": plan["python"]}
    explained = json.loads(gpuenv_cli("explain", "torch", *LAPTOP, "--json").stdout)
    assert explained["plan"]["assumed"]["driver"] == "576.02"


def test_given_facts_are_not_assumed(gpuenv_cli: Run) -> None:
    done = gpuenv_cli("resolve", "torch", *LAPTOP, "--driver", "457.49", "--python", "3.10")
    assert done.returncode == 0, done.stderr
    assert "no --driver given" not in done.stderr and "no --python given" not in done.stderr
    plan = json.loads(
        gpuenv_cli(
            "resolve", "torch", *LAPTOP, "--driver", "457.49", "--python", "3.10", "--json"
        ).stdout
    )
    assert "assumed" not in plan


def test_a_machine_file_is_the_machine_own_facts(gpuenv_cli: Run, tmp_path: Path) -> None:
    machine = gpuenv_cli("detect", "--json").stdout
    path = tmp_path / "machine.json"
    path.write_text(machine)
    done = gpuenv_cli("resolve", "torch", "--machine", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert "assumed" not in json.loads(done.stdout)


def test_lock_prints_the_assumptions_before_it_works(gpuenv_cli: Run, tmp_path: Path) -> None:
    """`--check` resolves without the network: the notes come from the plan alone."""
    out = tmp_path / "x.conda-lock.yml"
    done = gpuenv_cli("lock", "torch", "--os", "linux", "--gpu", "8.6", "-o", str(out), "--check")
    assert done.returncode == 1  # no such lockfile
    assert "no --driver given: planned for driver" in done.stderr
    assert "no --python given" in done.stderr
    assert "glibc is not known: locked wheels for glibc ≥ 2.28" in done.stderr


@pytest.mark.parametrize("flags", [[], ["--no-gpu"]])
def test_a_machine_without_a_gpu_assumes_no_driver(gpuenv_cli: Run, flags: list[str]) -> None:
    done = gpuenv_cli("resolve", "torch", "--os", "linux", *flags)
    assert done.returncode == 0, done.stderr
    assert "no --driver given" not in done.stderr and "no --python given" in done.stderr


def test_a_described_gpu_without_os_or_arch_says_what_it_assumed(gpuenv_cli: Run) -> None:
    done = gpuenv_cli("resolve", "torch", "--gpu", "RTX 3090", "--driver", "550.54.14", "--json")
    assumed = json.loads(done.stdout)["assumed"]
    assert set(assumed) == {"os", "arch", "python"}
    assert "no --os given: planned for" in done.stderr and "no --arch given" in done.stderr
    given = gpuenv_cli(
        "resolve",
        "torch",
        "--gpu",
        "RTX 3090",
        "--driver",
        "550.54.14",
        "--os",
        "linux",
        "--arch",
        "x86_64",
        "--python",
        "3.12",
    )
    assert "note:" not in given.stderr
