"""Known broken beats PTX: pip TensorFlow on consumer Blackwell (compute capability 12.0).

Expected answers come from TensorFlow's own tracker (issue threads, not from recipes/):
- tensorflow/tensorflow#101746: RTX 5080 Laptop, "TensorFlow versions 2.20.0 and 2.16.2 installed
  from pip": CUDA_ERROR_INVALID_PTX in cuModuleLoadData at the first GPU op.
- #99592 (RTX 50 series, tf 2.20: CUDA_ERROR_INVALID_PTX; "the only way I can get it to work is
  by using NVIDIA's NGC container"), #97387 (compute capability 12.0, TF 2.19), #90291 (5070 Ti,
  2.18), #89272 (RTX 5090, 2.20 nightly), #103531 (RTX PRO 1000 Blackwell, 2.20.0).
- #111958, labelled 2.21.0: "PTX version 8.5 does not support target 'sm_120'".
No thread reports B200 (10.0) either way: planned on the GPU, with a warning that says so.
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from gpuenv.resolve import ResolveError, resolve

BLACKWELL_CONSUMER = "GeForce RTX 5090"  # compute capability 12.0
DRIVER = "575.51.03"  # R575: knows Blackwell, runs CUDA 12.x natively


@pytest.mark.parametrize("req", ["tensorflow>=2.16", "tensorflow==2.16.2", "tensorflow==2.21.0"])
def test_reported_releases_are_not_planned_on_sm_120(describe, kb, req) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe(BLACKWELL_CONSUMER, DRIVER, "linux"), [req], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert not tf.gpu
    why = " ".join(plan.warnings)
    assert "sm_120" in why and "nvcr.io/nvidia/tensorflow" in why  # the reason and what works
    assert "WSL2 does not help" in why
    rejected = [r for r in plan.rejected if r.rule == "broken"]
    assert rejected and all(
        "github.com/tensorflow/tensorflow/issues/" in r.source for r in rejected
    )


def test_require_gpu_refuses_them(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResolveError, match="sm_120"):
        resolve(
            describe(BLACKWELL_CONSUMER, DRIVER, "linux"),
            ["tensorflow>=2.16"],
            kb=kb,
            require_gpu=True,
        )


def test_wsl2_is_the_same_wheel(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # #89272 and #90291 were on WSL2: the Linux wheels fail there too.
    plan = resolve(describe(BLACKWELL_CONSUMER, "576.02", "wsl"), ["tensorflow>=2.16"], kb=kb)
    assert not plan.frameworks["tensorflow"].gpu


def test_plain_request_never_gets_a_reported_release_on_the_gpu(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe(BLACKWELL_CONSUMER, DRIVER, "linux"), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert not (tf.gpu and Version(tf.version) >= Version("2.16.1"))


def test_an_unreported_blackwell_part_is_planned_with_a_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("B200", DRIVER, "linux"), ["tensorflow>=2.16"], kb=kb)
    assert plan.frameworks["tensorflow"].gpu
    assert any("no report says whether it runs on sm_100" in w for w in plan.warnings)


def test_cli_exit_3_under_require_gpu(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    out = gpuenv_cli(
        "resolve", "tensorflow>=2.16", "--gpu", BLACKWELL_CONSUMER, "--driver", DRIVER,
        "--os", "linux", "--require-gpu",
    )  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert "sm_120" in out.stderr
