"""PyTorch builds on the PyTorch index, and the plans they give the issue-11 machines.

Expected values are facts from the primary sources, written here by hand, not read back from
recipes/pytorch.toml:
- Variants per release: pytorch/test-infra branches release/2.5 .. release/2.14,
  tools/scripts/generate_binary_build_matrix.py (CUDA_ARCHES_DICT["test"], the aarch64 list, the
  Linux-only 12.9 additions; commits cited in pytorch.toml). Windows never builds 12.9 after 2.8.
- Architectures: .ci/manywheel/build_cuda.sh 12.6) "5.0;6.0;7.0;7.5;8.0;8.6;9.0"; Windows
  .ci/pytorch/windows/internal/cuda_config.bat 126 -> "5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0" and
  128/129/130/132 -> "7.5;8.0;8.6;9.0;10.0;12.0".
- Releases: `pip index versions torch` on the default index, 2026-12-01.
- CUDA 13.x needs driver >= 580.65.06 (Linux), CUDA 12.x >= 525.60.13 (CUDA Compatibility guide).
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from gpuenv.recipes import Build, KnowledgeBase, Release
from gpuenv.resolve import resolve
from gpuenv.resolve.rules import arch_support

# Every torch release the default index lists from 1.13 on (it also lists a stray "2.13.0+cpu").
INDEX_RELEASES = [
    "1.13.0",
    "1.13.1",
    "2.0.0",
    "2.0.1",
    "2.1.0",
    "2.1.1",
    "2.1.2",
    "2.2.0",
    "2.2.1",
    "2.2.2",
    "2.3.0",
    "2.3.1",
    "2.4.0",
    "2.4.1",
    "2.5.0",
    "2.5.1",
    "2.6.0",
    "2.7.0",
    "2.7.1",
    "2.8.0",
    "2.9.0",
    "2.9.1",
    "2.10.0",
    "2.11.0",
    "2.12.0",
    "2.12.1",
    "2.13.0",
    "2.14.0",
    "2.14.1",
    "2.15.0",
]

_L, _W, _A = "linux-64", "win-64", "linux-aarch64"
# CUDA variants per release and platform, from the test-infra release branches.
_V29 = {
    _L: {"cu126", "cu128", "cu129", "cu130"},
    _W: {"cu126", "cu128", "cu130"},
    _A: {"cu126", "cu128", "cu129", "cu130"},
}
_V212 = {_L: {"cu126", "cu130", "cu132"}, _W: {"cu126", "cu130", "cu132"}}
_V212[_A] = set(_V212[_L])
_V2121 = {_L: _V212[_L] | {"cu129"}, _W: _V212[_W], _A: _V212[_A] | {"cu129"}}
MATRIX: dict[str, dict[str, set[str]]] = {
    "2.5.0": {_L: {"cu118", "cu121", "cu124"}, _W: {"cu118", "cu121", "cu124"}, _A: {"cu124"}},
    "2.6.0": {_L: {"cu118", "cu124", "cu126"}, _W: {"cu118", "cu124", "cu126"}, _A: {"cu126"}},
    "2.7.0": {_L: {"cu118", "cu126", "cu128"}, _W: {"cu118", "cu126", "cu128"}, _A: {"cu128"}},
    "2.8.0": {_L: {"cu126", "cu128", "cu129"}, _W: {"cu126", "cu128", "cu129"}, _A: {"cu129"}},
    "2.9.0": _V29,
    "2.9.1": _V29,
    "2.10.0": _V29,
    "2.11.0": _V29,
    "2.12.0": _V212,
    "2.12.1": _V2121,
    "2.13.0": _V2121,
    "2.14.0": _V212,
    "2.14.1": _V212,
}

CU126_LINUX_SASS = ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")
CU126_WINDOWS_SASS = ("5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "9.0")
WINDOWS_CU128_UP_SASS = ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")


def _release(kb: KnowledgeBase, version: str) -> Release:
    return next(r for r in kb.framework("torch").releases if r.version == version)


def _cuda_variants(release: Release, platform: str) -> set[str]:
    return {b.variant for b in release.builds if b.is_gpu and platform in b.platforms}


def _build(release: Release, variant: str, platform: str) -> Build:
    return next(b for b in release.builds if b.variant == variant and platform in b.platforms)


def _chosen(kb: KnowledgeBase, plan) -> Build:  # type: ignore[no-untyped-def]
    fw = plan.frameworks["torch"]
    return _build(_release(kb, fw.version), fw.variant, plan.platform)


# --- the knowledge base holds the sources' facts ------------------------------------------------


def test_every_index_release_is_known(kb: KnowledgeBase) -> None:
    known = {r.version for r in kb.framework("torch").releases}
    assert sorted(set(INDEX_RELEASES) - known) == []


@pytest.mark.parametrize("version", sorted(MATRIX))
def test_pytorch_index_variants_per_platform(kb: KnowledgeBase, version: str) -> None:
    release = _release(kb, version)
    for platform, variants in MATRIX[version].items():
        assert _cuda_variants(release, platform) == variants, (version, platform)


@pytest.mark.parametrize("version", [v for v in INDEX_RELEASES if v != "2.15.0"])
def test_every_release_has_windows_cuda_builds(kb: KnowledgeBase, version: str) -> None:
    assert _cuda_variants(_release(kb, version), _W)


@pytest.mark.parametrize("version", [v for v in MATRIX if Version(v) >= Version("2.6")])
def test_cu126_kernels_from_the_build_scripts(kb: KnowledgeBase, version: str) -> None:
    release = _release(kb, version)
    linux = _build(release, "cu126", _L).archs
    windows = _build(release, "cu126", _W).archs
    assert linux is not None and windows is not None
    assert linux.sass == CU126_LINUX_SASS
    if version == "2.8.0":
        # pytorch/pytorch#160575: the 2.8.0+cu126 Windows wheels shipped without sm_50 and
        # sm_60 (get_arch_list() starts at sm_61); #160586 put them back for 2.9.
        assert windows.sass == tuple(c for c in CU126_WINDOWS_SASS if c not in ("5.0", "6.0"))
    else:
        assert windows.sass == CU126_WINDOWS_SASS


@pytest.mark.parametrize("version", ["2.11.0", "2.12.1", "2.13.0", "2.14.1"])
def test_windows_cuda_12_8_and_newer_has_no_volta(kb: KnowledgeBase, version: str) -> None:
    release = _release(kb, version)
    checked = [b for b in release.builds if b.is_gpu and _W in b.platforms and b.variant != "cu126"]
    assert checked  # a data change must not leave nothing to check
    for build in checked:
        assert build.archs is not None and build.archs.sass == WINDOWS_CU128_UP_SASS
        assert arch_support(build, "7.0") is None


def test_cu128_of_2_11_starts_at_turing_and_has_blackwell(kb: KnowledgeBase) -> None:
    build = _build(_release(kb, "2.11.0"), "cu128", _L)
    assert arch_support(build, "7.0") is None
    assert arch_support(build, "10.0") == "sass" and arch_support(build, "12.0") == "sass"


def test_pytorch_index_rows_are_marked_unverified(kb: KnowledgeBase) -> None:
    """The PyTorch index was not readable: its rows must say so rather than pass as wheel facts."""
    for version in ("2.11.0", "2.12.1", "2.14.1"):
        index_only = [b for b in _release(kb, version).builds if b.is_gpu and not b.pypi_default]
        assert index_only, version  # each of these releases has builds only on that index
        for build in index_only:
            assert not build.provenance.verified, (version, build.variant, build.platforms)
            assert "test-infra" in build.provenance.source


# --- the machines ------------------------------------------------------------------------


def test_p100_on_550_gets_the_newest_cu126_build(describe, kb: KnowledgeBase) -> None:
    plan = resolve(describe("Tesla P100-PCIE-16GB", "550.54.14", "linux"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert (fw.version, fw.variant, fw.gpu) == ("2.14.1", "cu126", True)
    assert arch_support(_chosen(kb, plan), "6.0") == "sass"


def test_v100_on_windows_566_gets_cu126(describe, kb: KnowledgeBase) -> None:
    plan = resolve(describe("Tesla V100-PCIE-16GB", "566.36", "windows"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert plan.platform == _W
    assert (fw.version, fw.variant, fw.gpu) == ("2.14.1", "cu126", True)


def test_rtx_5080_on_linux_575_gets_the_newest_cuda_12_build(describe, kb: KnowledgeBase) -> None:
    # Below the 580 floor of CUDA 13, the newest Linux CUDA 12 build with sm_120 is 2.13.0+cu129
    # (test-infra release/2.13 builds 12.9 for Linux); issue 11 expected 2.11.0+cu128 because it
    # did not know the cu129 builds of 2.12.1/2.13.0.
    plan = resolve(describe("GeForce RTX 5080", "575.51.02", "linux"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert (fw.version, fw.variant, fw.gpu) == ("2.13.0", "cu129", True)
    assert arch_support(_chosen(kb, plan), "12.0") == "sass"


def test_rtx_5080_within_2_11_gets_a_blackwell_build(describe, kb: KnowledgeBase) -> None:
    plan = resolve(describe("GeForce RTX 5080", "575.51.02", "linux"), ["torch<2.12"], kb=kb)
    fw = plan.frameworks["torch"]
    assert fw.version == "2.11.0" and fw.gpu
    assert fw.variant in {"cu128", "cu129"}  # both built for Linux in 2.11 (cu130 needs 580)


def test_rtx_5080_on_windows_576_gets_2_11_cu128(describe, kb: KnowledgeBase) -> None:
    # Windows builds no 12.9, and CUDA 13 needs R580: cu128 of 2.11 is the newest that runs.
    plan = resolve(describe("GeForce RTX 5080", "576.02", "windows"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert (fw.version, fw.variant, fw.gpu) == ("2.11.0", "cu128", True)


def test_pinned_2_14_1_on_pascal_is_a_gpu_plan(describe, kb: KnowledgeBase) -> None:
    plan = resolve(describe("GeForce GTX 1080 Ti", "550.54.14", "linux"), ["torch==2.14.1"], kb=kb)
    fw = plan.frameworks["torch"]
    assert (fw.version, fw.variant, fw.gpu) == ("2.14.1", "cu126", True)
    assert arch_support(_chosen(kb, plan), "6.1") == "sass"  # runs the sm_60 machine code


def test_grace_hopper_below_580_gets_the_aarch64_cu126_build(describe, kb: KnowledgeBase) -> None:
    plan = resolve(describe("9.0", "570.86.15", "linux", "aarch64"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert plan.platform == _A
    assert (fw.version, fw.variant, fw.gpu) == ("2.14.1", "cu126", True)


def test_pascal_cannot_pin_a_release_without_its_kernels(describe, kb: KnowledgeBase) -> None:
    # 2.15.0's only recorded CUDA builds (cu132) start at sm_75: never invent a cu126 build.
    plan = resolve(describe("Tesla P100-PCIE-16GB", "550.54.14", "linux"), ["torch==2.15.0"], kb=kb)
    fw = plan.frameworks["torch"]
    assert not fw.gpu and fw.variant == "cpu"
    assert any("sm_60" in w for w in plan.warnings)


def test_a_patch_release_that_does_not_exist_is_refused(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    result = gpuenv_cli(
        "resolve", "torch==2.14.2", "--gpu", "Tesla P100-PCIE-16GB", "--driver", "550.54.14"
    )
    assert result.returncode == 3
    assert "torch==2.14.2" in result.stderr
    assert "Traceback" not in result.stderr
