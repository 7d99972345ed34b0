"""Real probes run by real interpreters on this (GPU-less) machine."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuenv.commands.verify import verify
from gpuenv.verify import Expectations, ExpectedFramework, verify_environment
from gpuenv.verify.runner import run_probe

UV = Path(sys.executable).parent / "uv"


def make_venv(path: Path) -> Path:
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path / "bin" / "python"


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("bare") / "venv")


@pytest.fixture(scope="session")
def jax_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = make_venv(tmp_path_factory.mktemp("jax") / "venv")
    subprocess.run(
        [str(UV), "pip", "install", "-q", "--python", str(python), "jax", "jaxlib"],
        check=True,
        timeout=600,
    )
    return python


def test_missing_framework_is_a_clear_problem(bare_python: Path) -> None:
    exp = Expectations(frameworks={"torch": ExpectedFramework(gpu=False)})
    report = verify_environment(bare_python, exp, timeout=60)
    fw = report.frameworks[0]
    assert not report.ok
    assert fw.problems[0].startswith("torch is not installed in this environment")
    assert "Traceback" not in report.render()


def test_nothing_installed_and_no_plan_is_ok(bare_python: Path) -> None:
    report = verify_environment(bare_python, timeout=60)
    assert (
        report.ok
        and report.python_version
        == f"{sys.version_info[0]}.{sys.version_info[1]}.{sys.version_info[2]}"
    )
    assert "no framework" in report.notes[0]


def test_hanging_probe_is_cut_off(tmp_path: Path, bare_python: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text(
        "import sys, time\nsys.stderr.write('gpuenv-probe: stage cuInit\\n')\n"
        "sys.stderr.flush()\ntime.sleep(60)\n"
    )
    start = time.monotonic()
    run = run_probe(bare_python, "torch", timeout=2, script=script)
    assert time.monotonic() - start < 15
    assert run.timed_out and run.facts is None and run.last_stage == "cuInit"


def test_hanging_interpreter_fails_verify(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    exp = Expectations(frameworks={"jax": ExpectedFramework()})
    report = verify_environment(fake, exp, timeout=1.5)
    assert not report.ok and "did not finish within" in report.frameworks[0].problems[0]


@pytest.mark.network
def test_real_jax_cpu(jax_python: Path, tmp_path: Path) -> None:
    report = verify_environment(jax_python, timeout=120)
    assert report.ok, report.render()
    assert [f.name for f in report.frameworks] == ["jax"]
    # A plan that promised the GPU is not kept on this GPU-less machine: exit status 1.
    plan = tmp_path / "expect.json"
    plan.write_text(
        json.dumps(
            Expectations(
                accelerator="cuda", source="plan", frameworks={"jax": ExpectedFramework(gpu=True)}
            ).to_json()
        )
    )
    result = CliRunner().invoke(
        verify, ["--python", str(jax_python), "--expect-json", str(plan), "--json"]
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert "JAX has no CUDA support installed" in data["frameworks"]["jax"]["problems"][0]
