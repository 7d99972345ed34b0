"""The WSL2 advice on native Windows comes from resolving the same request for WSL2.

Expected answers from primary sources, not from recipes/:
- TensorFlow 2.11+ has no GPU build for native Windows; WSL2 runs the Linux builds
  (tensorflow.org/install/pip, 'Windows Native' and 'Windows WSL2').
- TensorFlow documents a Windows driver >= 528.33 for WSL2 (same page).
- The GeForce 940M is Maxwell GM108, compute capability 5.0 (developer.nvidia.com/cuda-gpus).
  TensorFlow 2.16's build configuration (.bazelrc at v2.16.2: sm_50 in
  TF_CUDA_COMPUTE_CAPABILITIES, CUDA 12.3) still has Maxwell kernels; 2.17 starts at sm_60
  (.bazelrc at v2.17.0). So in WSL2 a 940M runs TF 2.16.2, and only with driver >= 528.33.
"""

from __future__ import annotations

from gpuenv.resolve import resolve


def _wsl_fix(plan, framework: str) -> str:  # type: ignore[no-untyped-def]
    return next(f for f in plan.fixes if f.startswith(f"{framework}:") and "WSL2" in f)


def test_940m_is_told_what_wsl2_gives_and_which_driver_it_needs(kb, describe) -> None:
    plan = resolve(describe("GeForce 940M", "457.49", "windows"), ["tensorflow"], kb=kb)
    assert plan.frameworks["tensorflow"].version.startswith("2.10")  # native Windows
    fix = _wsl_fix(plan, "tensorflow")
    assert "tensorflow 2.16.2" in fix
    assert "≥ 528.33" in fix
    assert "457.49" in fix  # says what the current driver gives


def test_a_current_driver_needs_no_update_for_wsl2(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 3060", "560.94", "windows"), ["tensorflow"], kb=kb)
    fix = _wsl_fix(plan, "tensorflow")
    assert "current Windows driver 560.94" in fix and "updating" not in fix


def test_the_advice_respects_the_gpus_last_driver_branch(kb, describe) -> None:
    # A Kepler GPU cannot take a driver past R470 (NVIDIA's architecture matrix), and CUDA in
    # WSL2 needs a Windows driver of R495 or later (NVIDIA's CUDA on WSL user guide): WSL2
    # cannot help it, and the advice says so rather than asking for a driver it cannot run.
    plan = resolve(describe("Tesla K80", "441.22", "windows"), ["tensorflow"], kb=kb)
    fix = _wsl_fix(plan, "tensorflow")
    assert "would not help" in fix, fix


def test_wsl2_itself_gets_no_wsl_advice(kb, describe) -> None:
    plan = resolve(describe("GeForce 940M", "457.49", "wsl"), ["tensorflow"], kb=kb)
    assert not any("in WSL2, this GPU" in f for f in plan.fixes)
