"""Rules whose checks the resolve-rules mutation sweep (benchmarks/mutation/resolve-rules.md)
found unguarded: each test fails with its mutant applied."""

from __future__ import annotations

from gpuenv.machine import Gpu, Machine, OSInfo
from gpuenv.resolve import resolve


def test_wsl2_advice_with_an_older_driver_names_the_update_not_the_current_driver(
    kb, describe
) -> None:  # type: ignore[no-untyped-def]
    # GeForce 940M, Windows driver 512.15: in WSL2 it gets TensorFlow 2.14.1 (CUDA 11.8 through
    # minor-version compatibility) now and 2.16.2 after an update to >= 528.33 (TensorFlow's
    # documented WSL2 floor for CUDA 12): the line must not claim 2.16.2 runs with 512.15
    plan = resolve(describe("GeForce 940M", "512.15", "windows"), ["tensorflow"], kb=kb)
    [line] = [f for f in plan.fixes if "WSL2" in f]
    assert "after updating the Windows driver to ≥ 528.33" in line, line
    assert "with the current Windows driver" not in line
    assert "with driver 512.15 it gets tensorflow 2.14.1" in line


def test_a_machine_without_a_driver_is_told_the_toolkits_own_driver(kb) -> None:  # type: ignore[no-untyped-def]
    # no driver at all: the fix is CUDA 12.5's own minimum (555.42.02, NVIDIA's toolkit table),
    # the driver that runs the build natively, not only the 12.x floor 525.60.13
    bare = Machine(OSInfo("linux"), "x86_64", "linux-64", gpus=(Gpu("GeForce GTX 1080 Ti", "6.1"),))
    plan = resolve(bare, ["tensorflow==2.21.0"], kb=kb, python="3.11", no_gpu=False)
    assert any(
        "no NVIDIA driver found; CUDA 12.5 needs driver ≥ 555.42.02" in w for w in plan.warnings
    ), plan.warnings
