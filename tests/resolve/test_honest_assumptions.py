"""A decision resting on an assumed row says so in resolve's warnings, not only in explain.

The case from the issue: torch's cu118 builds bundle cuDNN 8.7 (torch 2.3.1 METADATA:
nvidia-cudnn-cu11==8.7.0.84); NVIDIA's support matrices that can be read stop at 8.5 (SM 3.5+)
and resume at 8.9.5 (SM 5.0+), so "8.7 runs on a Kepler K80 (sm_37)" is an assumption.
"""

from __future__ import annotations

from gpuenv.resolve import resolve


def test_kepler_on_cudnn_8_7_warns_that_it_is_assumed(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("Tesla K80", "470.256.02", "linux"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    assert torch.gpu and torch.cudnn and torch.cudnn.startswith("8.7")
    assert any("cuDNN 8.7" in w and "unverified" in w for w in plan.warnings)


def test_a_gpu_far_from_the_edge_gets_no_such_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch"], kb=kb)
    assert not any("rests on an unverified row" in w for w in plan.warnings)
