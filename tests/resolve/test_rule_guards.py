"""Resolver rules no other test would miss if they were deleted (issue 20's surviving mutants),
tested through resolve()'s answers only, so they hold whatever shape the rules take inside.

Facts the expected answers rest on (primary sources, not recipes/):
- CUDA Toolkit release notes, table 3 ('CUDA Toolkit and Corresponding Driver Versions'):
  CUDA 12.4 GA needs >= 550.54.14 and 12.6 GA >= 560.28.03 on Linux; CUDA 12.x runs from
  >= 525.60.13 through minor-version compatibility, which 'does not support PTX JIT' (CUDA
  Compatibility guide, 'Minor Version Compatibility', limitations). CUDA 13.x's floor is
  >= 580 (CUDA 13.0 release notes: R580 is the minimum driver for CUDA 13).
- Ada (GeForce RTX 4090, compute capability 8.9) is first supported by CUDA 11.8 and its R520
  driver (CUDA 11.8 release notes): a 510 driver runs no CUDA build on it, and the driver that
  lets a CUDA 13 build run there is CUDA 13's floor, the higher of the two.
- PyTorch's own policy of building only SASS for listed archs is read from recipes/ rows that
  are edited below in a private copy of the knowledge base (the test controls that input).

PTX-only builds and `broken_on` rows do not occur in today's knowledge base for these GPUs, so
those tests edit rows of a private copy (GPUENV_RECIPES-style) to make one.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase, load_knowledge_base
from gpuenv.resolve import resolve

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
SM50_SASS = 'sass = ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]\nptx = []'


def _edited_kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit) -> KnowledgeBase:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root, ignore=shutil.ignore_patterns("*.md"))
    path = root / "pytorch.toml"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return load_knowledge_base(root)


def _ptx_only_for_ampere(text: str) -> str:
    # the CUDA 12 builds of torch 2.1-2.7 now carry SASS up to sm_75 and PTX for compute_80:
    # on an RTX 3090 (8.6) they run only through PTX JIT
    assert text.count(SM50_SASS) == 1
    return text.replace(SM50_SASS, 'sass = ["5.0", "6.0", "7.0", "7.5"]\nptx = ["8.0"]')


def test_ptx_only_builds_need_their_own_toolkits_driver(tmp_path, monkeypatch, describe) -> None:  # type: ignore[no-untyped-def]
    kb = _edited_kb(tmp_path, monkeypatch, _ptx_only_for_ampere)
    machine = describe("GeForce RTX 3090", "535.183.01")
    below = resolve(machine, ["torch==2.6.0"], kb=kb).frameworks["torch"]
    # 535 runs CUDA 12.4/12.6 SASS by minor-version compatibility, but not their PTX: the
    # newest build left is the CUDA 11.8 one, whose SASS covers sm_86
    assert (below.variant, below.cuda, below.gpu) == ("cu118", "11.8", True)
    at = resolve(describe("GeForce RTX 3090", "560.35.03"), ["torch==2.6.0"], kb=kb)
    assert at.frameworks["torch"].variant == "cu126"
    assert any("PTX" in w for w in at.warnings), at.warnings


def test_the_same_builds_with_sass_run_through_minor_version_compatibility(describe) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3090", "535.183.01"), ["torch==2.6.0"])
    assert plan.frameworks["torch"].variant == "cu126"  # the edit above is what changes it


def test_a_build_recorded_broken_on_a_gpu_is_not_chosen_there(
    tmp_path, monkeypatch, describe
) -> None:  # type: ignore[no-untyped-def]
    def broken_cu126(text: str) -> str:
        start = text.index('version = "2.6.0"\nreleased')
        row = 'variant = "cu126"\nplatforms = ["linux-64"]\n'
        at = text.index(row, start) + len(row)
        return text[:at] + 'broken_on = ["8.6"]\n' + text[at:]

    kb = _edited_kb(tmp_path, monkeypatch, broken_cu126)
    plan = resolve(describe("GeForce RTX 3090", "580.65.06"), ["torch==2.6.0"], kb=kb)
    assert plan.frameworks["torch"].variant == "cu124"
    broken = [r for r in plan.rejected if "cu126" in r.candidate and r.rule == "broken"]
    assert broken and "sm_86" in broken[0].message
    # on another GPU the row does not apply
    other = resolve(describe("GeForce RTX 4090", "580.65.06"), ["torch==2.6.0"], kb=kb)
    assert other.frameworks["torch"].variant == "cu126"


_FIX = re.compile(r"install NVIDIA driver ≥ (\d+(?:\.\d+)*) to use torch \S+ \[cu13\d\]")


def _cuda13_fixes(plan) -> list[str]:  # type: ignore[no-untyped-def]
    found = [m.group(1) for f in plan.fixes if (m := _FIX.search(f))]
    assert found, plan.fixes
    return found


def test_the_fix_names_the_driver_that_is_enough_not_the_lowest_floor(describe) -> None:  # type: ignore[no-untyped-def]
    # a 560 driver predates Blackwell (R570 is its first branch); CUDA 13 builds need R580:
    # the driver to install for them is the higher of the two
    plan = resolve(describe("GeForce RTX 5090", "560.35.03"), ["torch"])
    for driver in _cuda13_fixes(plan):
        assert Version(driver) >= Version("580"), plan.fixes


def test_with_no_driver_the_fix_is_the_higher_of_the_gpus_and_the_toolkits(describe) -> None:  # type: ignore[no-untyped-def]
    machine = dataclasses.replace(describe("GeForce RTX 5090", "580.65.06"), driver=None)
    plan = resolve(machine, ["torch"])
    assert not plan.frameworks["torch"].gpu
    for driver in _cuda13_fixes(plan):
        assert Version(driver) >= Version("580"), plan.fixes
    # each no-driver rejection names the driver it needs and cites that toolkit's own row
    no_driver = [r for r in plan.rejected if r.message.startswith("no NVIDIA driver found")]
    assert no_driver
    for r in no_driver:
        cuda = re.search(r"CUDA (\d+\.\d+) needs driver ≥ \d+\.\d+", r.message)
        assert cuda, r.message
        toolkit = kb_default().toolkit(cuda.group(1))
        assert toolkit is not None and r.source == toolkit.provenance.source


def kb_default() -> KnowledgeBase:
    return load_knowledge_base()


def _with_gpus(machine: Machine, *others: Machine) -> Machine:
    gpus = [*machine.gpus]
    for other in others:
        gpus += [dataclasses.replace(g, index=len(gpus)) for g in other.gpus]
    return dataclasses.replace(machine, gpus=tuple(gpus))


def test_a_mixed_machine_is_planned_for_its_oldest_gpu(describe) -> None:  # type: ignore[no-untyped-def]
    driver = "580.65.06"
    new, old = describe("GeForce RTX 4090", driver), describe("GeForce GTX 1080 Ti", driver)
    alone = resolve(old, ["tensorflow"])
    assert alone.constraints  # the cuDNN cap for Pascal, which the mixed machine must keep
    for machine in (_with_gpus(new, old), _with_gpus(old, new)):
        mixed = resolve(machine, ["tensorflow"])
        assert mixed.constraints == alone.constraints
        assert mixed.frameworks == alone.frameworks
        assert mixed.gpu is not None and "1080 Ti" in str(mixed.gpu.get("name"))


def _pins_agree(kb: KnowledgeBase, plan_frameworks: dict, platform: str) -> list[str]:  # type: ignore[type-arg]
    """Shared CUDA wheels of the chosen builds that no single version satisfies."""
    reqs: dict[str, list[Requirement]] = {}
    for name, choice in plan_frameworks.items():
        release = next(r for r in kb.framework(name).releases if r.version == choice.version)
        build = next(
            b for b in release.builds if b.variant == choice.variant and platform in b.platforms
        )
        for text in build.pip_libs:
            req = Requirement(text)
            reqs.setdefault(req.name, []).append(req)
    bad = []
    for lib, group in reqs.items():
        pins = [s.version for r in group for s in r.specifier if s.operator == "=="]
        if any(not r.specifier.contains(p, prereleases=True) for p in pins for r in group):
            bad.append(f"{lib}: {', '.join(str(r.specifier) for r in group)}")
    return bad


def test_frameworks_in_one_environment_agree_on_their_cuda_wheels(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # torch pins each nvidia-* wheel with ==, TensorFlow and JAX give ranges: an environment
    # can hold only one version of each
    for request in (["torch<2.6", "tensorflow"], ["torch<2.6", "jax"], ["torch", "tensorflow"]):
        plan = resolve(describe("GeForce RTX 3090", "580.65.06"), request, kb=kb)
        assert all(f.gpu for f in plan.frameworks.values()), plan.frameworks
        assert _pins_agree(kb, plan.frameworks, plan.platform) == [], request


def test_keeping_one_framework_on_the_gpu_beats_newer_releases_all_on_the_cpu(describe) -> None:  # type: ignore[no-untyped-def]
    # Linux with an R418 driver (CUDA 10.1): JAX has no GPU build for it at all, TensorFlow's
    # CUDA 10.1 releases (2.1-2.3) still run on it; the search keeps TensorFlow on the GPU
    # rather than taking the newest of both on the CPU. (WSL2, the first scenario here, needs an
    # R495 Windows driver for CUDA at all since the knowledge round of issue 19.)
    plan = resolve(describe("GeForce GTX 1080 Ti", "418.39", "linux"), ["tensorflow", "jax"])
    assert plan.frameworks["tensorflow"].gpu, plan.frameworks
    assert not plan.frameworks["jax"].gpu
    newest_cpu = resolve(
        describe("GeForce GTX 1080 Ti", "418.39", "linux"), ["tensorflow"], no_gpu=True
    )
    assert plan.frameworks["tensorflow"].version != newest_cpu.frameworks["tensorflow"].version


def test_gpu_index_plans_for_the_gpu_it_names(describe) -> None:  # type: ignore[no-untyped-def]
    driver = "580.65.06"
    new, old = describe("GeForce RTX 4090", driver), describe("GeForce GTX 1080 Ti", driver)
    machine = _with_gpus(old, new)  # index 0: the 1080 Ti, index 1: the 4090
    chosen = resolve(machine, ["tensorflow"], gpu_index=1)
    assert chosen.gpu is not None and "4090" in str(chosen.gpu.get("name"))
    assert chosen.constraints == resolve(new, ["tensorflow"]).constraints  # no Pascal cap


def test_tensorflow_on_linux_runs_cuda_12_from_cuda_12s_own_linux_floor(describe) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow documents its 528.33 only for WSL2 (tensorflow.org/install/pip); on Linux the
    # CUDA 12 floor 525.60.13 (CUDA release notes, minor-version compatibility) is what counts
    plan = resolve(describe("GeForce RTX 3060", "525.60.13", "linux"), ["tensorflow"])
    tf = plan.frameworks["tensorflow"]
    assert tf.gpu and (tf.cuda or "").startswith("12.")


def test_a_typed_gpu_name_of_200_characters_is_still_read() -> None:
    from gpuenv.recipes import load_knowledge_base as load
    from gpuenv.recipes.gpu_lookup import MAX_GPU_TEXT, TargetError, lookup_gpu

    kb = load()
    for text, too_long in (("x" * MAX_GPU_TEXT, False), ("x" * (MAX_GPU_TEXT + 1), True)):
        with pytest.raises(TargetError) as err:
            lookup_gpu(kb, text, typed=True)
        assert ("longer than any NVIDIA GPU's name" in str(err.value)) is too_long


def test_frameworks_with_no_python_in_common_are_one_clear_refusal(describe) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow < 2.5 ends at Python 3.8, torch >= 2.9 starts at 3.10 (their wheel tags): the
    # search runs out of combinations and says why, without running past its candidates
    from gpuenv.resolve import ResolveError

    machine = describe("GeForce RTX 3090", "580.65.06")
    with pytest.raises(ResolveError, match="no Python version in common"):
        resolve(machine, ["tensorflow<2.5", "torch>=2.9"])


def test_a_framework_driver_floor_applies_on_its_own_os(tmp_path, monkeypatch, describe) -> None:  # type: ignore[no-untyped-def]
    # today's only framework floor is TensorFlow's for WSL2; a Linux one (a row this test
    # adds to its private copy) must apply on Linux and only there
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root, ignore=shutil.ignore_patterns("*.md"))
    cuda = root / "cuda.toml"
    cuda.write_text(
        cuda.read_text(encoding="utf-8")
        + '\n[[framework_driver]]\nframework = "tensorflow"\nos = "linux"\ncuda_major = 12\n'
        'min_driver = "530.30.02"\nsource = "a row made up by this test"\n',
        encoding="utf-8",
    )
    kb = load_knowledge_base(root)
    linux = resolve(describe("GeForce RTX 3060", "525.60.13", "linux"), ["tensorflow"], kb=kb)
    tf = linux.frameworks["tensorflow"]
    assert not (tf.gpu and (tf.cuda or "").startswith("12.")), tf
    assert any("530.30.02" in f for f in linux.fixes), linux.fixes
    at = resolve(describe("GeForce RTX 3060", "530.30.02", "linux"), ["tensorflow"], kb=kb)
    assert (at.frameworks["tensorflow"].cuda or "").startswith("12.")
