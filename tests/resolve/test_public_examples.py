"""The issue's public examples, each a test, through the real knowledge base."""

from __future__ import annotations

import json

import pytest

from gpuenv.resolve import ResolveError, resolve

LAPTOP = ("--gpu", "GeForce 940M", "--driver", "457.49", "--os", "windows")


def test_windows_940m_tensorflow_and_torch(describe, kb) -> None:
    plan = resolve(describe("GeForce 940M", "457.49", "windows"), ["tensorflow", "torch"], kb=kb)
    tf, torch = plan.frameworks["tensorflow"], plan.frameworks["torch"]
    assert (tf.version, tf.cuda, tf.cudnn[:3]) == ("2.10.1", "11.2", "8.1")
    assert tf.gpu and torch.gpu
    assert torch.variant == "cu118" and torch.cuda == "11.8"
    assert plan.accelerator == "cuda"
    assert plan.platform == "win-64"
    # one Python that both accept: TF 2.10 stops at 3.10
    assert plan.python == "3.10"
    text = " ".join(plan.reasons)
    assert "last tensorflow release with GPU support on native Windows" in text
    # the CUDA libraries for TF on native Windows come from conda-forge, as TF's guide says
    assert any(c.startswith("cudatoolkit") for c in plan.conda)
    assert any(
        r.index and r.index.endswith("/cu118")
        for r in plan.pip
        if r.requirement.startswith("torch")
    )


def test_windows_940m_tensorflow_2_11_is_cpu_with_wsl2_hint(describe, kb) -> None:
    machine = describe("GeForce 940M", "457.49", "windows")
    plan = resolve(machine, ["tensorflow>=2.11"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert not tf.gpu and tf.cuda is None
    assert plan.accelerator == "cpu"
    assert any("WSL2" in w for w in plan.warnings)
    with pytest.raises(ResolveError, match="WSL2"):
        resolve(machine, ["tensorflow>=2.11"], kb=kb, require_gpu=True)


def test_cli_require_gpu_is_an_error_for_tf_2_11_on_windows(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "tensorflow>=2.11", *LAPTOP, "--require-gpu")
    assert result.returncode == 3
    assert "WSL2" in result.stderr
    assert "Traceback" not in result.stderr


def test_linux_without_gpu_gets_newest_cpu_torch(describe, kb) -> None:
    plan = resolve(describe(None, None, "linux", "x86_64"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    newest = kb.framework("torch").releases[0].version
    assert torch.version == newest
    assert torch.variant == "cpu" and not torch.gpu
    assert plan.accelerator == "cpu"


def test_unknown_gpu_name_suggests_compute_capability(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "torch", "--gpu", "GeForce 9999", "--os", "linux")
    assert result.returncode == 2
    assert "compute capability" in result.stderr
    assert "--gpu 6.1" in result.stderr or "--gpu X.Y" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_driver_version_is_a_clear_error(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "torch", "--gpu", "8.6", "--driver", "abc")
    assert result.returncode == 2
    assert "driver" in result.stderr and "abc" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_framework_is_a_clear_error(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "tensorfloww", "--gpu", "8.6", "--driver", "550.54.14")
    assert result.returncode == 2
    assert "unknown framework" in result.stderr and "tensorfloww" in result.stderr


def test_json_plan_has_the_contract_fields(gpuenv_cli) -> None:
    result = gpuenv_cli("resolve", "tensorflow", "torch", *LAPTOP, "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    for key in ("python", "platform", "accelerator", "frameworks", "warnings", "reasons"):
        assert key in plan
    for fw in plan["frameworks"].values():
        for key in ("version", "variant", "cuda", "cudnn"):
            assert key in fw
