"""SASS/PTX compatibility (ARCHITECTURE.md, "Resolution policy: Architecture"), table-driven."""

from __future__ import annotations

import pytest

from gpuenv.recipes import ArchSet, Build, Sourced
from gpuenv.resolve.rules import arch_support

SRC = Sourced("test", True, "")


def build(sass: tuple[str, ...], ptx: tuple[str, ...] = ()) -> Build:
    return Build(
        variant="cuXYZ",
        platforms=("linux-64",),
        cuda="12.8",
        cudnn=None,
        archs=ArchSet("t", sass, ptx, SRC),
        index=None,
        local="",
        pypi_default=(),
        package=None,
        extra=None,
        pip_libs=(),
        conda_libs=(),
        companions=(),
        broken_on=(),
        provenance=SRC,
    )


@pytest.mark.parametrize(
    ("sass", "ptx", "cc", "expected"),
    [
        (("5.0", "6.0", "7.0"), (), "5.0", "sass"),
        (
            ("5.0", "6.0", "7.0"),
            (),
            "5.2",
            "sass",
        ),  # sm_50 SASS runs on 5.2 (same major, lower minor)
        (("5.0", "6.0", "7.0"), (), "6.1", "sass"),  # GTX 1080 Ti from sm_60
        (("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (), "6.1", None),  # cu128: no Pascal
        (("8.0",), (), "7.5", None),  # newer minor is not backward compatible
        (("8.6",), (), "8.0", None),
        (("5.0",), ("9.0",), "12.0", "ptx"),  # Blackwell JIT from compute_90
        (("5.0",), ("9.0",), "8.9", None),  # PTX for a newer arch does not JIT down
        (("5.0",), ("8.9",), "8.9", "ptx"),  # PTX for exactly this arch JITs (CUDA guide)
        (("7.5",), ("8.0",), "8.6", "ptx"),  # another major's SASS never runs; lower PTX does
        (("3.7", "5.0"), (), "3.5", None),  # sm_37 does not run on 3.5
        (("3.5",), (), "3.7", "sass"),
        (
            ("9.0a",),
            (),
            "9.0",
            None,
        ),  # arch-specific 'a' targets are not portable; never count them
        (("8.0", "9.0"), ("9.0",), "9.0", "sass"),
    ],
)
def test_arch_support(
    sass: tuple[str, ...], ptx: tuple[str, ...], cc: str, expected: str | None
) -> None:
    assert arch_support(build(sass, ptx), cc) == expected


def test_runtime_arch_lists_follow_the_same_rule() -> None:
    from gpuenv.recipes.archs import from_arch_list
    from gpuenv.verify.arch import arch_coverage

    sass, ptx = from_arch_list(["sm_50", "sm_90a", "sm_100", "sm_120", "compute_120"])
    assert sass == ["5.0", "9.0a", "10.0", "12.0"] and ptx == ["12.0"]
    cu128 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
    assert arch_coverage(cu128, "6.1") is None  # the GTX 1080 Ti "no kernel image"
    assert arch_coverage(cu128, "8.9") == "sass"
    assert arch_coverage(["sm_90a"], "9.0") is None


def test_arch_list_entries_that_name_no_architecture_are_skipped() -> None:
    """Survivors of the archs mutation run: a kind that is neither sm nor compute (even one
    that sorts before "compute"), and numbers too short to hold a major and a minor."""
    from gpuenv.recipes.archs import from_arch_list

    assert from_arch_list(["arch_86", "lto_90", "sm_8", "sm_8a", "compute_x"]) == ([], [])
    assert from_arch_list(["sm_86", "compute_90", "sm_90a"]) == (["8.6", "9.0a"], ["9.0"])
