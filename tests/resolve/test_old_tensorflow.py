"""TensorFlow 1.x for old code: planned where it runs, refused with the reason and the release
that does run where it cannot. Expected answers from primary sources, not from recipes/:

- tensorflow/docs site/en/install/source.md, "Tested build configurations" (at
  tensorflow/docs@7c3650212740204359d4ceae481abc79345541be): tensorflow_gpu-1.12.0 = CUDA 9,
  cuDNN 7; tensorflow_gpu-1.13.1 = CUDA 10.0, cuDNN 7.4; tensorflow_gpu-1.4.0 = CUDA 8, cuDNN 6.
- NVIDIA, CUDA Toolkit Release Notes, driver table: CUDA 9.0.76 needs >= 384.81 (Linux),
  10.0.130 >= 410.48, 8.0.61 GA2 >= 375.26; before CUDA 11 there is no minor-version
  compatibility (CUDA Compatibility guide), so each build needs its own toolkit's driver.
- developer.nvidia.com/cuda-gpus: GeForce GTX 1080 Ti = 6.1 (Pascal), RTX 3090 = 8.6 (Ampere).
- tensorflow/tensorflow#42958 (TensorFlow team, 2020-09-04): "TF 1.x does not support RTX 3000,
  as it only supports older versions of CUDA", TF 2.4 will; #43718: TF 2.3 (CUDA 10.1) on an
  RTX 3090 fails with "device kernel image is invalid".
- The tensorflow_gpu-1.5.0 to 1.14.0 Linux wheels carry sm_61 machine code (their fatbins, read
  with gpuenv recipes verify --artifacts); CUDA 9.0 and cuDNN 7 have no conda-forge package
  (conda-forge/cudatoolkit-feedstock builds 9.2 and later), so the plan says to install them.
"""

from __future__ import annotations

import pytest

from gpuenv.errors import GpuenvError
from gpuenv.resolve import resolve

GTX_1080_TI = "GeForce GTX 1080 Ti"
RTX_3090 = "GeForce RTX 3090"


def tf(describe, kb, gpu: str, driver: str, req: str, **kw):  # type: ignore[no-untyped-def]
    plan = resolve(describe(gpu, driver, "linux", "x86_64"), [req], kb=kb, **kw)
    return plan, plan.frameworks["tensorflow"]


def test_tf_1_12_plans_on_a_1080_ti_with_driver_410(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, GTX_1080_TI, "410.48", "tensorflow-gpu==1.12")
    assert fw.gpu and fw.version == "1.12.0" and fw.cuda == "9.0"
    # machine code for sm_61: no JIT warning
    assert not any("JIT" in w for w in plan.warnings), plan.warnings
    # CUDA 9.0 and cuDNN 7 come from NVIDIA's installers: the plan says so
    assert any("CUDA 9.0" in w and "system-wide" in w for w in plan.warnings), plan.warnings


def test_tf_1_12_needs_the_cuda_9_0_driver_itself(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # 384.81 runs it; one below does not (no minor-version compatibility before CUDA 11)
    _, fw = tf(describe, kb, GTX_1080_TI, "384.81", "tensorflow-gpu==1.12")
    assert fw.gpu
    plan, fw = tf(describe, kb, GTX_1080_TI, "384.80", "tensorflow-gpu==1.12")
    assert not fw.gpu
    assert any("384.81" in f for f in plan.fixes), plan.fixes


def test_tf_1_13_is_cuda_10_0_from_conda_forge(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, GTX_1080_TI, "410.48", "tensorflow-gpu==1.13.1")
    assert fw.gpu and fw.cuda == "10.0"
    assert not any("system-wide" in w for w in plan.warnings)
    # and a CUDA 10.0 build needs 410.48 itself: the 1.12 driver floor does not carry it
    _, fw = tf(describe, kb, GTX_1080_TI, "396.26", "tensorflow-gpu==1.13.1")
    assert not fw.gpu


def test_tf_1_4_is_cuda_8(describe, kb) -> None:  # type: ignore[no-untyped-def]
    _, fw = tf(describe, kb, GTX_1080_TI, "375.26", "tensorflow-gpu==1.4.0")
    assert fw.gpu and fw.cuda == "8.0"


@pytest.mark.parametrize(
    "req", ["tensorflow-gpu==1.12", "tensorflow-gpu==1.0.0", "tensorflow<2", "tensorflow==2.3.4"]
)
def test_tf_1_on_an_rtx_3090_is_refused_with_the_reason_and_tf_2_4(describe, kb, req) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, RTX_3090, "535.104.05", req)
    assert not fw.gpu
    text = " ".join(plan.warnings)
    assert "sm_86" in text and "TensorFlow 2.4" in text, plan.warnings


def test_tf_1_on_an_rtx_3090_under_require_gpu_is_an_error(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(GpuenvError) as err:
        tf(describe, kb, RTX_3090, "535.104.05", "tensorflow-gpu==1.12", require_gpu=True)
    assert "TensorFlow 2.4" in str(err.value)


def test_tf_2_4_is_not_covered_on_the_3090(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # the release the refusal names does plan there (compute_80 PTX, CUDA 11.0)
    _, fw = tf(describe, kb, RTX_3090, "535.104.05", "tensorflow==2.4.4")
    assert fw.gpu


def test_tf_2_4_says_to_install_cuda_11_0_and_cudnn_8_0_not_a_conda_package(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # tensorflow/docs site/en/install/gpu.md at 70c897d13 (2020-12-14): cuda-11-0 and
    # libcudnn8=8.0.4.30-1+cuda11.0 from NVIDIA's apt repository; conda-forge's cudnn feedstock
    # never built cuDNN 8.0 for CUDA 11.0 (its 'skip 11.0' commits), so cudnn=8.0 there is no plan
    plan, fw = tf(describe, kb, RTX_3090, "535.104.05", "tensorflow==2.4.4")
    assert fw.gpu and fw.cuda == "11.0"
    assert not any(lib.startswith(("cudnn", "cudatoolkit")) for lib in plan.conda), plan.conda
    assert any("libcudnn8=8.0.4.30" in w and "system-wide" in w for w in plan.warnings)
