"""Known broken is not quietly replaced by an older build nobody reported working: pip
TensorFlow 2.16-2.21 fail on sm_120, and TF 2.15.1 has no sm_120 machine code either."""

from __future__ import annotations

import pytest

from gpuenv.resolve import resolve
from gpuenv.resolve.resolver import ResolveError


def test_an_older_ptx_only_build_is_planned_only_with_the_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("RTX 5090", "580.95.05", "linux"), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert tf.gpu and tf.version == "2.15.1"
    [warning] = [w for w in plan.warnings if "no report says this older build works" in w]
    assert "sm_120" in warning and "NGC" in warning


def test_require_gpu_refuses_it(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResolveError, match="sm_120"):
        resolve(describe("RTX 5090", "580.95.05", "linux"), ["tensorflow"], kb=kb, require_gpu=True)


def test_a_gpu_no_row_covers_gets_no_such_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("RTX 4090", "580.95.05", "linux"), ["tensorflow"], kb=kb)
    assert not any("no report says this older build works" in w for w in plan.warnings)
