"""The judgement, on recorded (CPU, real) and documented (GPU, written) probe outputs."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuenv.verify import Expectations, ExpectedFramework, Report
from gpuenv.verify.arch import arch_coverage, cudnn_text
from gpuenv.verify.judge import judge
from gpuenv.verify.runner import ProbeRun

FIXTURES = Path(__file__).parent / "fixtures"
TORCH_CPU = json.loads((FIXTURES / "torch-2.13.0-cpu.recorded.json").read_text())
JAX_CPU = json.loads((FIXTURES / "jax-0.10.2-cpu.recorded.json").read_text())
CU126_ARCHS = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
CU128_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]


def run(facts: dict[str, Any] | None, **kw: Any) -> ProbeRun:
    defaults: dict[str, Any] = dict(
        probe="x",
        facts=facts,
        returncode=0,
        timed_out=False,
        seconds=3.2,
        last_stage="done",
        stderr_tail=(),
    )
    defaults.update(kw)
    return ProbeRun(**defaults)


def gpu_plan(
    name: str,
    version: str,
    variant: str,
    cuda: str | None,
    cudnn: str | None,
    cc: str = "8.6",
    gpu_name: str = "NVIDIA GeForce RTX 3090",
) -> Expectations:
    return Expectations(
        accelerator="cuda",
        gpu_cc=cc,
        gpu_name=gpu_name,
        source="plan",
        frameworks={name: ExpectedFramework(version, variant, True, cuda, cudnn)},
    )


def torch_gpu(
    cc: str = "8.6", name: str = "NVIDIA GeForce RTX 3090", archs: list[str] | None = None
) -> dict[str, Any]:
    """torch 2.6.0+cu126 on a working GPU (written from the API docs)."""
    f = copy.deepcopy(TORCH_CPU)
    f.update(
        version="2.6.0+cu126",
        cuda="12.6",
        cudnn_version=90501,
        cuda_available=True,
        device_count=1,
        arch_list=archs or CU126_ARCHS,
        devices=[{"index": 0, "name": name, "capability": cc}],
    )
    f["ops"] += [
        {"name": n, "device": "cuda:0", "ran": True, "ok": True, "error": None, "max_abs_err": 3e-6}
        for n in ("matmul", "conv2d")
    ]
    return f


def test_torch_gpu_ok() -> None:
    exp = gpu_plan("torch", "2.6.0", "cu126", "12.6", "9.5.1")
    r = judge("torch", exp, run(torch_gpu()))
    assert r.ok, r.problems
    assert r.build == "CUDA 12.6, cuDNN 9.5.1"
    assert r.device is not None and "RTX 3090" in r.device
    assert any(c.name == "architecture" and c.ok for c in r.checks)


def test_cpu_torch_where_plan_wanted_cuda() -> None:
    exp = gpu_plan("torch", "2.13.0", "cu126", "12.6", "9.5.1")
    r = judge("torch", exp, run(TORCH_CPU))
    assert not r.ok
    assert any("CPU build (torch.version.cuda is None)" in p for p in r.problems)
    assert any("cu126 index" in f for f in r.fix)


def test_cpu_torch_without_plan_is_fine() -> None:
    r = judge("torch", Expectations.cpu_only(["torch"]), run(TORCH_CPU))
    assert r.ok and r.device == "cpu"
    assert any("GPU was not expected" in n for n in r.notes)


def test_cuda_visible_devices_hides_gpu() -> None:
    f = torch_gpu()
    f.update(cuda_available=False, devices=[], cuda_visible_devices="")
    f["ops"] = f["ops"][:2]
    r = judge("torch", gpu_plan("torch", "2.6.0", "cu126", "12.6", "9"), run(f))
    assert not r.ok
    assert any("CUDA_VISIBLE_DEVICES is set to ''" in p for p in r.problems)
    assert any("unset CUDA_VISIBLE_DEVICES" in x for x in r.fix)


def test_driver_missing_reports_cuda_init_error() -> None:
    f = torch_gpu()
    f.update(
        cuda_available=False,
        devices=[],
        cuda_init="",
        cuda_init_error="RuntimeError: Found no NVIDIA driver on your system.",
    )
    f["ops"] = f["ops"][:2]
    r = judge("torch", gpu_plan("torch", "2.6.0", "cu126", "12.6", None), run(f))
    assert any(
        "driver is missing or too old" in p and "Found no NVIDIA driver" in p for p in r.problems
    )


def test_arch_list_lacks_sm_61_no_kernel_image() -> None:
    f = torch_gpu(cc="6.1", name="NVIDIA GeForce GTX 1080 Ti", archs=CU128_ARCHS)
    f.update(version="2.7.0+cu128", cuda="12.8", cudnn_version=90701)
    for op in f["ops"][2:]:
        op.update(
            ran=False,
            ok=False,
            max_abs_err=None,
            error=(
                "RuntimeError: CUDA error: no kernel image is available for execution on the device"
            ),
        )
    f["messages"] = [
        "UserWarning: NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not "
        "compatible with the current PyTorch installation."
    ]
    exp = gpu_plan("torch", "2.7.0", "cu128", "12.8", "9.7", cc="6.1")
    r = judge("torch", exp, run(f))
    assert not r.ok
    assert any("no kernel image for NVIDIA GeForce GTX 1080 Ti (sm_61)" in p for p in r.problems)
    assert any(c.name == "architecture" and not c.ok for c in r.checks)


def test_arch_rules() -> None:
    assert arch_coverage(CU126_ARCHS, "6.1") == "sass"  # sm_60 runs on 6.1
    assert arch_coverage(CU128_ARCHS, "6.1") is None
    assert arch_coverage(["sm_80", "compute_80"], "8.9") == "sass"
    assert arch_coverage(["sm_80", "compute_80"], "9.0") == "ptx"
    assert arch_coverage(["sm_90a"], "9.0") is None
    assert cudnn_text(8907) == "8.9.7" and cudnn_text(90501) == "9.5.1"


def tf_facts(**kw: Any) -> dict[str, Any]:
    """TensorFlow 2.15.1 on Linux (written from the API docs)."""
    f: dict[str, Any] = {
        "probe": "tensorflow",
        "schema": 1,
        "python": "3.11.7",
        "platform": "linux",
        "cuda_visible_devices": None,
        "import_ok": True,
        "version": "2.15.1",
        "built_with_cuda": True,
        "build_info": {"cuda_version": "12.2", "cudnn_version": "8"},
        "gpus": [],
        "messages": [],
        "ops": [
            {
                "name": "matmul",
                "device": "/CPU:0",
                "ran": True,
                "ok": True,
                "error": None,
                "max_abs_err": 1e-6,
                "placed_on": "/job:localhost/replica:0/task:0/device:CPU:0",
            }
        ],
    }
    f.update(kw)
    return f


def test_tf_built_with_cuda_but_no_gpu() -> None:
    stderr = (
        "2026-11-29 10:00:00.000000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:2256]"
        " Cannot dlopen some GPU libraries. Please make sure the missing libraries "
        "mentioned above are installed properly",
        "unrelated line",
    )
    exp = gpu_plan("tensorflow", "2.15.1", "cuda", "12.2", "8.9")
    r = judge("tensorflow", exp, run(tf_facts(), stderr_tail=stderr))
    assert not r.ok
    problem = " ".join(r.problems)
    assert "lists no GPU" in problem and "CUDA/cuDNN libraries" in problem
    assert "Cannot dlopen some GPU libraries" in problem and "unrelated" not in problem


def test_tf_gpu_ok() -> None:
    f = tf_facts(gpus=["/physical_device:GPU:0"])
    f["ops"].append(
        {
            "name": "matmul",
            "device": "/GPU:0",
            "ran": True,
            "ok": True,
            "error": None,
            "max_abs_err": 2e-6,
            "placed_on": "/job:localhost/replica:0/task:0/device:GPU:0",
        }
    )
    r = judge("tensorflow", gpu_plan("tensorflow", "2.15.1", "cuda", "12.2", "8.9"), run(f))
    assert r.ok, r.problems


def test_jax_cpu_recorded_and_fallback_with_plugin() -> None:
    assert judge("jax", Expectations.cpu_only(["jax"]), run(JAX_CPU)).ok
    f = dict(
        JAX_CPU,
        plugins={"jax-cuda12-plugin": "0.4.30", "jax-cuda12-pjrt": "0.4.30"},
        messages=[
            "jax._src.xla_bridge: An NVIDIA GPU may be present on this machine, but "
            "a CUDA-enabled jaxlib is not installed. Falling back to cpu."
        ],
    )
    r = judge("jax", gpu_plan("jax", "0.10.2", "cuda12", "12", None), run(f))
    assert not r.ok
    assert any("fell back to the CPU" in p and "Falling back to cpu" in p for p in r.problems)


def test_import_failure_and_timeout_and_crash() -> None:
    f = {
        "probe": "torch",
        "import_ok": False,
        "ops": [],
        "messages": [],
        "import_error": "ImportError: libcudart.so.12: cannot open shared object file",
    }
    r = judge("torch", Expectations.cpu_only(["torch"]), run(f))
    assert not r.ok and "`import torch` fails: ImportError: libcudart" in r.problems[0]
    r = judge(
        "torch",
        Expectations.cpu_only(["torch"]),
        run(
            None,
            timed_out=True,
            returncode=None,
            seconds=30.0,
            last_stage="torch.cuda.is_available()",
        ),
    )
    assert (
        not r.ok
        and "did not finish within 30s (stuck at: torch.cuda.is_available())" in (r.problems[0])
    )
    r = judge(
        "jax",
        Expectations.cpu_only(["jax"]),
        run(None, returncode=-11, stderr_tail=("Segmentation fault",)),
    )
    assert not r.ok and "crashed (exit status -11)" in r.problems[0]


def test_wrong_result_and_version_mismatch() -> None:
    f = copy.deepcopy(TORCH_CPU)
    f["ops"][0].update(ok=False, max_abs_err=12.5)
    exp = Expectations(frameworks={"torch": ExpectedFramework("2.12.0", "cpu")}, source="plan")
    r = judge("torch", exp, run(f))
    assert any("wrong result" in p for p in r.problems)
    assert any("torch 2.13.0+cpu is installed, the plan chose 2.12.0" in p for p in r.problems)


def test_json_round_trips() -> None:
    exp = gpu_plan("torch", "2.6.0", "cu126", "12.6", "9.5.1")
    assert Expectations.from_json(json.loads(json.dumps(exp.to_json()))) == exp
    fw = judge("torch", exp, run(TORCH_CPU))
    report = Report("/env/bin/python", "3.11.7", "cuda", (fw,))
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report and not again.ok
    assert "FAILED torch 2.13.0+cpu" in report.render()


# verify reads what the process really loaded (/proc/self/maps) and judges where it came from.

PREFIX = "/home/me/.local/share/gpuenv/envs/.versions/lab-0123456789ab"
OWN = f"{PREFIX}/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
PLAN = gpu_plan("torch", "2.6.0", "cu126", "12.6", "9.5.1")


def test_a_cuda_library_from_outside_is_a_problem_with_the_fix() -> None:
    facts = torch_gpu()
    facts.update(
        prefix=PREFIX,
        loaded_libraries=[
            OWN,
            "/usr/local/cuda-12.2/lib64/libcudnn.so.9.1.0",
            "/usr/lib/wsl/lib/libcuda.so.1",  # the driver, from where it belongs
        ],
    )
    r = judge("torch", PLAN, run(facts))
    assert not r.ok
    [problem] = r.problems
    assert problem.startswith("/usr/local/cuda-12.2/lib64/libcudnn.so.9.1.0 was loaded from")
    assert PREFIX in problem
    assert any(
        "remove /usr/local/cuda-12.2/lib64 from LD_LIBRARY_PATH" in f and "gpuenv run" in f
        for f in r.fix
    )
    [check] = [c for c in r.checks if c.name == "CUDA libraries loaded"]
    assert not check.ok and check.detail == f"1 of 2 from {PREFIX}"


def test_the_environments_own_libraries_pass() -> None:
    facts = torch_gpu()
    facts.update(prefix=PREFIX, loaded_libraries=[OWN, "/usr/lib/wsl/lib/libcuda.so.1"])
    r = judge("torch", PLAN, run(facts))
    assert r.ok, r.problems
    assert [c.ok for c in r.checks if c.name == "CUDA libraries loaded"] == [True]
    # a probe from before this check (no facts about it) is judged as before
    assert judge("torch", PLAN, run(torch_gpu())).ok


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_probe_lists_a_library_it_really_loaded(tmp_path: Path) -> None:
    source = tmp_path / "x.c"
    source.write_text("int x(void) { return 1; }\n")
    lib = tmp_path / "libcublasLt.so.12"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-Wl,-soname,libcublasLt.so.12", "-o", str(lib), str(source)],
        check=True,
    )
    probes = Path(__file__).resolve().parents[2] / "installer" / "gpuenv" / "verify" / "probes"
    code = (
        f"import sys, ctypes; sys.path.insert(0, {str(probes)!r}); import _probe_common as c\n"
        f"print(c.loaded_libraries()); ctypes.CDLL({str(lib)!r}); print(c.loaded_libraries())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", repr([str(lib.resolve())])]


# Two frameworks in one environment: each must load the libraries built for its own CUDA.

CUDNN = f"{PREFIX}/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"


@pytest.mark.parametrize(
    ("owner", "ok"),
    [
        ("nvidia-cudnn-cu12 9.5.1.17", True),
        ("nvidia-cudnn-cu13 9.26.0.51", False),  # TF's or jax's CUDA 13 cuDNN on torch cu126
        (None, True),  # libcudnn.so.9's number is cuDNN's, not CUDA's: unknown, not wrong
    ],
)
def test_a_library_built_for_another_cuda_is_a_problem(owner: str | None, ok: bool) -> None:
    facts = torch_gpu()
    facts.update(
        prefix=PREFIX,
        loaded_libraries=[OWN, CUDNN],
        library_owners={CUDNN: owner} if owner else {},
    )
    r = judge("torch", PLAN, run(facts))
    assert r.ok is ok, r.problems
    [check] = [c for c in r.checks if c.name == "CUDA libraries match the build"]
    assert check.ok is ok
    if not ok:
        assert any(CUDNN in p and "CUDA 13" in p and "CUDA 12.6" in p for p in r.problems)


def test_the_cuda_a_library_was_built_for() -> None:
    from gpuenv.verify.judge import built_for_cuda

    assert built_for_cuda("/x/libcublasLt.so.13", None) == 13
    assert built_for_cuda("/x/libcudart.so.12.4.127", None) == 12
    assert built_for_cuda("/x/libcufft.so.11", None) is None  # cuFFT 11 is CUDA 12's
    assert built_for_cuda("/x/libcufft.so.12", "nvidia-cufft 12.0.0.15") is None
    assert built_for_cuda("/x/libcublas.so.13", "nvidia-cublas 13.0.0.19") == 13
    assert built_for_cuda("/x/libnccl.so.2", "nvidia-nccl-cu11 2.21.5") == 11


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_probe_names_the_wheel_that_installed_a_loaded_library(tmp_path: Path) -> None:
    site = tmp_path / "site"
    lib = site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    lib.parent.mkdir(parents=True)
    source = tmp_path / "x.c"
    source.write_text("int x(void) { return 1; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    info = site / "nvidia_cudnn_cu13-9.26.0.51.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.26.0.51\n"
    )
    (info / "RECORD").write_text("nvidia/cudnn/lib/libcudnn.so.9,,\n")
    probes = Path(__file__).resolve().parents[2] / "installer" / "gpuenv" / "verify" / "probes"
    code = (
        f"import sys, ctypes; sys.path[:0] = [{str(probes)!r}, {str(site)!r}]\n"
        f"import _probe_common as c; ctypes.CDLL({str(lib)!r})\n"
        "print(c.library_owners(c.loaded_libraries()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == repr({str(lib.resolve()): "nvidia-cudnn-cu13 9.26.0.51"})
