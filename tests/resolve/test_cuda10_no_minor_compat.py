"""Before CUDA 11 there is no minor-version compatibility: a CUDA 10.x build needs its own
toolkit's driver (NVIDIA's table 3: 10.1 needs 418.39 on Linux, 418.96 on Windows), never only
the major's oldest one."""

from __future__ import annotations

import pytest

from gpuenv.resolve import resolve
from gpuenv.resolve.resolver import ResolveError


@pytest.mark.parametrize(
    ("os_name", "below", "enough"),
    [("linux", "410.48", "418.39"), ("windows", "411.31", "418.96")],
)
def test_a_cuda_10_1_build_needs_its_own_driver(describe, kb, os_name, below, enough) -> None:  # type: ignore[no-untyped-def]
    request = ["tensorflow==2.3.*"]
    with pytest.raises(ResolveError, match=f"own minimum \\(≥ {enough}\\).*no minor-version"):
        resolve(describe("GTX 1080 Ti", below, os_name), request, kb=kb, require_gpu=True)
    plan = resolve(describe("GTX 1080 Ti", enough, os_name), request, kb=kb, require_gpu=True)
    assert plan.frameworks["tensorflow"].cuda == "10.1"
    assert not any("minor-version compatibility" in w for w in plan.warnings)
    # below it, the newest release that runs is a CUDA 10.0 one, on the GPU
    older = resolve(describe("GTX 1080 Ti", below, os_name), ["tensorflow<2.4"], kb=kb)
    assert older.frameworks["tensorflow"].cuda == "10.0" and older.frameworks["tensorflow"].gpu


def test_cuda_11_still_runs_through_minor_version_compatibility(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("Tesla T4", "470.199.02", "linux"), ["tensorflow==2.14.*"], kb=kb)
    assert plan.frameworks["tensorflow"].cuda == "11.8"
    assert any("minor-version compatibility" in w for w in plan.warnings)
