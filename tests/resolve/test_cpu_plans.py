"""A CPU plan uses CPU-only builds where they exist, reports no CUDA, and says truly why.

Sources (not recipes/): the default index publishes tensorflow-cpu 1.15.0-2.21.0 (no 2.0.x) with
manylinux x86_64 and win_amd64 wheels, e.g. tensorflow_cpu-2.21.0-cp313-cp313-manylinux_2_27_x86_64
.whl; TensorFlow's own pip page (tensorflow.org/install/pip, "Package location") lists
tensorflow-cpu as "the CPU-only version". PyTorch's "+cpu" builds (download.pytorch.org/whl/cpu)
are its CPU-only builds (pytorch.org "Start Locally": Compute Platform "CPU").
"""

from __future__ import annotations

import pytest

from gpuenv.resolve import ResolveError, resolve


def test_no_gpu_tensorflow_is_tensorflow_cpu(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(
        describe("GeForce RTX 3090", "560.35.03", "linux"), ["tensorflow"], kb=kb, no_gpu=True
    )
    tf = plan.frameworks["tensorflow"]
    assert tf.variant == "cpu" and tf.cuda is None and tf.cudnn is None
    assert any(p.requirement.startswith("tensorflow-cpu==") for p in plan.pip)
    assert plan.accelerator == "cpu"


def test_gpu_that_cannot_run_any_build_gets_tensorflow_cpu(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # a driver older than every CUDA 11/12 floor (R418 < 450.80.02): no TF >= 2.4 GPU build runs
    plan = resolve(describe("GeForce RTX 2080 Ti", "418.39", "linux"), ["tensorflow>=2.16"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert not tf.gpu and tf.cuda is None
    assert any(p.requirement.startswith("tensorflow-cpu==") for p in plan.pip)
    assert not any("no CPU-only build was available" in w for w in plan.warnings)


def test_no_gpu_torch_is_the_cpu_build(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(
        describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch"], kb=kb, no_gpu=True
    )
    torch = plan.frameworks["torch"]
    assert torch.variant == "cpu" and torch.cuda is None


def test_tensorflow_cpu_asks_for_a_cpu_plan(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["tensorflow-cpu"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert not tf.gpu and tf.cuda is None
    assert any(p.requirement.startswith("tensorflow-cpu==") for p in plan.pip)
    assert not any("no GPU build fits" in r for r in plan.reasons)


def test_tensorflow_cpu_with_require_gpu_is_refused(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResolveError, match="CPU-only"):
        resolve(
            describe("GeForce RTX 3090", "560.35.03", "linux"),
            ["tensorflow-cpu"],
            kb=kb,
            require_gpu=True,
        )


def test_tensorflow_gpu_is_the_retired_name_in_one_line(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # The default index: tensorflow-gpu's last wheels are 2.11.0 (manylinux2014_x86_64) and
    # 2.10.1 (win_amd64); tensorflow-gpu 2.12.0 is an sdist only, which fails on install.
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["tensorflow-gpu"], kb=kb)
    assert plan.frameworks["tensorflow"].gpu
    notes = [w for w in plan.warnings if "tensorflow-gpu" in w]
    assert len(notes) == 1 and "retired" in notes[0] and "2.11.0" in notes[0]


def test_a_cuda_build_run_on_the_cpu_reports_no_cuda(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # Only the default index reachable: it has torch 2.7.1 for linux-64 only as a CUDA build
    # (torch-2.7.1-cp313-cp313-manylinux_2_28_x86_64.whl requires nvidia-* wheels); +cpu builds
    # are on PyTorch's own index. Run on the CPU, that build uses no CUDA: the plan says null.
    from gpuenv.resolve.target import Availability

    seen = Availability(versions={"torch": {"2.7.1": ("default",)}})
    plan = resolve(describe(None, None, "linux"), ["torch==2.7.1"], kb=kb, available=seen)
    torch = plan.frameworks["torch"]
    assert not torch.gpu and torch.variant != "cpu"
    assert torch.cuda is None and torch.cudnn is None
    assert any("is a CUDA build: it runs on the CPU" in w for w in plan.warnings)
