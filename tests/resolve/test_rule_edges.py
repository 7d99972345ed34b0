"""Resolver rules at the edges no other test reached (mutation area resolve-rules), through
resolve() and build_target(), the API the CLI and gpuenv.api use.

Facts the expected answers rest on (primary sources, not recipes/):
- torch 2.3.1's cu118 wheels bundle cuDNN 8.7 (METADATA: nvidia-cudnn-cu11==8.7.0.84); CUDA
  11.8 needs driver >= 520.61.05 on Linux (CUDA 11.8 release notes, table 3).
- Ampere (RTX 3090) is compute capability 8.6, Turing (RTX 2080) 7.5, Ada (RTX 4090) 8.9
  (developer.nvidia.com/cuda-gpus); Ada's first driver branch is R520, Turing's much older.
The knowledge-base rows the answers also depend on are read from the knowledge base itself, so
a data edit moves the expectation with it.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from gpuenv.machine import Gpu, Machine, parse_driver_version
from gpuenv.recipes import KnowledgeBase, load_knowledge_base
from gpuenv.resolve import resolve
from gpuenv.resolve.target import build_target

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def _with_gpus(machine: Machine, *gpus: Gpu) -> Machine:
    return dataclasses.replace(machine, gpus=list(gpus))


def test_a_gpu_far_above_an_unverified_cudnn_rows_edge_gets_no_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # the cu118 build brings cuDNN 8.7, whose row is unverified at its lower edge (Kepler);
    # an Ampere GPU is far from that edge, so nothing about it is assumed
    plan = resolve(describe("GeForce RTX 3090", "520.61.05", "linux"), ["torch==2.3.1"], kb=kb)
    torch = plan.frameworks["torch"]
    assert torch.gpu and (torch.cudnn or "").startswith("8.7"), torch
    assert not kb.cudnn["8.7"].provenance.verified  # what makes the question arise
    assert not any("rests on an unverified row" in w for w in plan.warnings), plan.warnings


def test_a_gpu_at_a_verified_cudnn_rows_edge_gets_no_warning(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # Maxwell (5.x) sits at the lower edge of cuDNN 9's row, which is verified
    plan = resolve(describe("GeForce GTX 980", "560.35.03", "linux"), ["torch==2.6.0"], kb=kb)
    torch = plan.frameworks["torch"]
    cudnn = torch.cudnn or ""
    assert torch.gpu and cudnn, torch
    row = kb.cudnn[".".join(cudnn.split(".")[:2])]
    assert row.provenance.verified and row.min_compute_capability.startswith("5.")
    assert not any("rests on an unverified row" in w for w in plan.warnings), plan.warnings


def _kb_with_framework_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: str
) -> KnowledgeBase:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root, ignore=shutil.ignore_patterns("*.md"))
    cuda = root / "cuda.toml"
    cuda.write_text(cuda.read_text(encoding="utf-8") + row, encoding="utf-8")
    return load_knowledge_base(root)


def test_a_native_windows_framework_floor_applies_on_windows(
    tmp_path, monkeypatch, describe
) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow 2.10, the last with native Windows GPU builds, is built with CUDA 11.2; a
    # Windows row (made up by this test, in a private copy) must hold there and name its
    # CUDA major in the rejection
    kb = _kb_with_framework_floor(
        tmp_path,
        monkeypatch,
        '\n[[framework_driver]]\nframework = "tensorflow"\nos = "windows"\ncuda_major = 11\n'
        'min_driver = "599.99"\nsource = "a row made up by this test"\n',
    )
    machine = describe("GeForce RTX 3060", "560.94", "windows")
    plan = resolve(machine, ["tensorflow==2.10.1"], kb=kb)
    assert not plan.frameworks["tensorflow"].gpu
    messages = [r.message for r in plan.rejected if r.rule == "driver"]
    assert any(
        "documents driver ≥ 599.99 for its CUDA 11 builds on windows" in m for m in messages
    ), messages
    # the same request without the row plans the GPU build
    assert resolve(machine, ["tensorflow==2.10.1"]).frameworks["tensorflow"].gpu


def test_a_single_gpu_is_described_by_its_name(kb: KnowledgeBase, describe) -> None:  # type: ignore[no-untyped-def]
    target = build_target(describe("GeForce RTX 3090", "550.54.14", "linux"), kb)
    assert target.describe_gpu() == "GeForce RTX 3090 (compute capability 8.6, sm_86)"


def test_several_gpus_are_described_by_their_compute_capabilities(
    kb: KnowledgeBase, describe
) -> None:  # type: ignore[no-untyped-def]
    machine = _with_gpus(
        describe("GeForce RTX 4090", "550.54.14", "linux"),
        Gpu("GeForce RTX 4090", "8.9", index=0),
        Gpu("GeForce RTX 2080", "7.5", index=1),
    )
    described = build_target(machine, kb).describe_gpu()
    assert described == "GPUs of compute capability 7.5, 8.9 (sm_75, sm_89)"


def test_the_driver_floor_of_several_gpus_is_the_newest_generations(
    kb: KnowledgeBase, describe
) -> None:  # type: ignore[no-untyped-def]
    # the generations with a first driver of their own: Blackwell (12.0) and Rubin (10.7),
    # whose floor is the higher although its compute capability is the lower
    blackwell, rubin = kb.generation_for("12.0"), kb.generation_for("10.7")
    assert blackwell and rubin
    low, high = blackwell.min_driver("linux"), rubin.min_driver("linux")
    assert low and high and parse_driver_version(high) > parse_driver_version(low)
    pair = [Gpu("GeForce RTX 5090", "12.0"), Gpu("a Rubin GPU", "10.7")]
    for gpus in (pair, pair[::-1]):
        numbered = [dataclasses.replace(g, index=i) for i, g in enumerate(gpus)]
        machine = _with_gpus(describe("GeForce RTX 5090", "615.00", "linux"), *numbered)
        target = build_target(machine, kb)
        assert (target.generation_min_driver, target.generation_min_owner) == (high, rubin.name)


@pytest.mark.parametrize(
    ("probe", "source"),
    [
        ("nvidia-smi", "nvidia-smi; compute capability from knowledge base"),
        ("", "compute capability from knowledge base"),
    ],
)
def test_a_compute_capability_looked_up_says_so_after_the_probe(
    kb: KnowledgeBase,
    describe,
    probe: str,
    source: str,  # type: ignore[no-untyped-def]
) -> None:
    machine = _with_gpus(
        describe("GeForce RTX 3090", "550.54.14", "linux"),
        Gpu("GeForce RTX 3090", None, source=probe),
    )
    gpu = build_target(machine, kb).gpu
    assert gpu is not None
    assert (gpu.compute_capability, gpu.source) == ("8.6", source)


def test_a_gpu_build_missing_on_linux_aarch64_says_so_not_windows(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # the knowledge base records TensorFlow's CUDA builds for linux-64 only: on an Arm Linux
    # machine with a GPU each is rejected as not published there (and not as native Windows'
    # missing GPU builds), the CPU build is planned
    plan = resolve(
        describe("GeForce RTX 3090", "550.54.14", "linux", "aarch64"), ["tensorflow"], kb=kb
    )
    assert not plan.frameworks["tensorflow"].gpu
    platform = [r.message for r in plan.rejected if r.rule == "platform"]
    assert platform and all("not published for linux-aarch64" in m for m in platform), platform
    assert not any("Windows" in r.message for r in plan.rejected)
    # the newest release too, though its CPU build is published there: a variant that is not
    # published on a platform is said so, whatever other variants are
    newest = kb.framework("tensorflow").releases[0]
    assert any(r.candidate.startswith(f"tensorflow {newest.version} [") for r in plan.rejected)
