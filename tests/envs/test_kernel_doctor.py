"""`gpuenv doctor` reports a Jupyter kernel gpuenv registered whose environment can no longer
start it (replaced by a stack without ipykernel, or gone), and passes over the others."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuenv.envs.jupyter import kernel_spec, kernels_that_cannot_start, register_kernel
from installrepos import gpuenv


def _env(root: Path, with_ipykernel: bool) -> Path:
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (root / "bin").mkdir()
    python = root / "bin" / "python"
    python.write_text("")
    if with_ipykernel:
        (site / "ipykernel_launcher.py").write_text("")
    return python


def test_doctor_names_a_kernel_its_environment_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    register_kernel(_env(tmp_path / "good", True), "good", "jax", {}, os.environ)
    register_kernel(_env(tmp_path / "replaced", False), "lab", "jax", {}, os.environ)
    register_kernel(tmp_path / "gone" / "bin" / "python", "gone", "jax", {}, os.environ)
    foreign = tmp_path / "jupyter" / "kernels" / "gpuenv-foreign"  # not written by gpuenv
    foreign.mkdir(parents=True)
    (foreign / "kernel.json").write_text(
        json.dumps(kernel_spec(Path("/nope"), "x", "", {}) | {"metadata": {}})
    )
    found = {Path(f).name: why for f, _, why in kernels_that_cannot_start(os.environ)}
    assert set(found) == {"gpuenv-lab", "gpuenv-gone"}
    assert "no ipykernel" in found["gpuenv-lab"] and "does not exist" in found["gpuenv-gone"]
    done = gpuenv("doctor", "--json", "--no-verify")
    assert done.stdout.startswith("{"), done.stderr
    codes = [
        f for f in json.loads(done.stdout)["machine_findings"] if f["code"] == "kernel-cannot-start"
    ]
    assert len(codes) == 2 and done.returncode == 1
    assert any("gpuenv setup -n lab --jupyter" in " ".join(f["fix"]) for f in codes)
