"""WSL2 as NVIDIA's CUDA on WSL user guide (docs.nvidia.com/cuda/wsl-user-guide) states it: a
Windows driver of R495 or later, Pascal and newer GPUs officially (Maxwell "not officially
supported"), the GPU in the WDDM driver model. Every WSL2 plan and every "use WSL2" advice says
so. R495's first Windows driver in the CUDA toolkit table is 496.04 (CUDA 11.5 GA).
"""

from __future__ import annotations

from gpuenv.resolve import resolve


def test_wsl2_below_r495_gets_no_gpu_build(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3060", "472.50", "wsl"), ["torch"], kb=kb)
    assert not plan.frameworks["torch"].gpu
    assert any("WSL2" in w and "496.04" in w for w in plan.warnings)


def test_wsl2_plan_says_what_it_needs_of_the_host(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3060", "560.94", "wsl"), ["torch"], kb=kb)
    assert plan.frameworks["torch"].gpu
    assert any("WDDM" in r and "wsl-user-guide" in r for r in plan.reasons)


def test_maxwell_in_wsl2_is_flagged_as_unofficial(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce 940M", "560.94", "wsl"), ["torch"], kb=kb)
    assert any("not officially supported" in w for w in plan.warnings)


def test_use_wsl2_advice_for_maxwell_says_so(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce 940M", "452.39", "windows"), ["tensorflow"], kb=kb)
    advice = [f for f in plan.fixes if "WSL2" in f]
    assert advice and all("not officially supported" in f and "WDDM" in f for f in advice)
