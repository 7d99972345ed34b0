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


def test_a_build_that_needs_system_wide_cuda_says_so(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow 1.12's GPU wheel loads CUDA 9.0 and cuDNN 7 installed system-wide (its install
    # guide); 1.15's are planned with conda packages, and nothing is said of them
    machine = describe("GeForce GTX 1080", "410.48", "linux")
    old = resolve(machine, ["tensorflow==1.12.3"], kb=kb)
    assert old.frameworks["tensorflow"].gpu
    assert any(
        w.startswith("tensorflow 1.12.3 [cuda] uses the GPU only with CUDA 9.0")
        for w in old.warnings
    ), old.warnings
    newer = resolve(machine, ["tensorflow==1.15.0"], kb=kb)
    assert newer.frameworks["tensorflow"].gpu
    assert not any("uses the GPU only with" in w for w in newer.warnings), newer.warnings


def test_a_companion_without_wheels_for_a_python_keeps_the_plan_off_it(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # torch 2.5.1 has wheels for Python 3.9-3.13 on linux-64, its torchvision (0.20.1) for
    # 3.9-3.12 only (the default index's file names): asked for together, the plan takes 3.12
    release = next(r for r in kb.framework("torch").releases if r.version == "2.5.1")
    theirs = release.related_python["torchvision"]["linux-64"]
    assert "3.13" in release.python["linux-64"] and "3.13" not in theirs
    machine = describe("GeForce RTX 3090", "560.35.03", "linux")
    alone = resolve(machine, ["torch==2.5.1"], kb=kb)
    both = resolve(machine, ["torch==2.5.1", "torchvision"], kb=kb)
    assert (alone.python, both.python) == (
        "3.13",
        max(theirs, key=lambda v: tuple(map(int, v.split(".")))),
    )


@pytest.mark.parametrize(
    ("gpu", "unofficial"),
    [("GeForce GTX 980", True), ("GeForce GTX 1080", False), ("GeForce RTX 3060", False)],
)
def test_wsl2_advice_says_maxwell_is_not_officially_supported_there(
    describe,
    kb,
    gpu: str,
    unofficial: bool,  # type: ignore[no-untyped-def]
) -> None:
    # NVIDIA's CUDA on WSL guide: Pascal (6.0) and newer officially; Maxwell (5.x, here the
    # GTX 980's 5.2) runs but is "not officially supported"
    plan = resolve(describe(gpu, "457.49", "windows"), ["tensorflow"], kb=kb)
    [line] = [f for f in plan.fixes if f.startswith("tensorflow: in WSL2")]
    assert ("'not officially supported'" in line) is unofficial, line
    assert "WSL2 needs the GPU in WDDM mode" in line


def test_wsl2_advice_for_a_gpu_without_a_driver(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = dataclasses.replace(describe("GeForce GTX 1080", "457.49", "windows"), driver=None)
    plan = resolve(machine, ["tensorflow"], kb=kb)
    [line] = [f for f in plan.fixes if f.startswith("tensorflow: in WSL2")]
    assert "after updating the Windows driver to ≥" in line, line
    assert line.endswith(
        "; without a driver no tensorflow GPU build runs there (WSL2 needs the GPU in WDDM mode;"
        " NVIDIA's CUDA on WSL guide)"
    ), line


def test_a_two_digit_sm_finds_the_broken_row_of_its_compute_capability(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow < 2.4 is recorded broken on compute capability 8.6 (sm_86), as 2.16-2.20 on
    # 12.0 (sm_120): the sm name is read back into the compute capability either way
    from gpuenv.resolve.broken_rule import broken_nearby

    target = build_target(describe("GeForce RTX 3090", "470.82.01", "linux"), kb)
    tf = kb.framework("tensorflow")
    for sm, cc in (("sm_86", "8.6"), ("sm_120", "12.0")):
        release = next(
            r for r in tf.releases if any(cc in b.compute_capabilities for b in tf.broken)
        )
        build = next(b for b in release.builds if b.is_gpu and "linux-64" in b.platforms)
        row = broken_nearby(kb, release, build, target, sm)
        assert row is not None and cc in row.compute_capabilities, (sm, row)
    release = tf.releases[0]
    build = next(b for b in release.builds if b.is_gpu)
    assert broken_nearby(kb, release, build, target, "sm_75") is None


def _without_toolkit(kb: KnowledgeBase, cuda: str) -> KnowledgeBase:
    """The knowledge base without CUDA `cuda`'s toolkit row (its major's row stays)."""
    toolkits = {k: v for k, v in kb.toolkits.items() if k != cuda}
    return dataclasses.replace(kb, toolkits=toolkits)


def test_a_cuda_version_without_its_toolkit_row_is_checked_by_its_majors_floor(
    describe, kb
) -> None:  # type: ignore[no-untyped-def]
    edited = _without_toolkit(kb, "12.6")
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch==2.6.0"], kb=edited)
    assert plan.frameworks["torch"].cuda == "12.6"
    # the major's row still holds the driver checks: nothing is said to be skipped
    assert not any("is not in the knowledge base" in w for w in plan.warnings), plan.warnings
    # without a driver, the rejection rests on the major's row
    none = dataclasses.replace(describe("GeForce RTX 3090", "560.35.03", "linux"), driver=None)
    rejected = resolve(none, ["torch==2.6.0"], kb=edited).rejected
    [cu126] = [r for r in rejected if r.candidate == "torch 2.6.0 [cu126]"]
    assert cu126.rule == "driver" and cu126.source == kb.cuda_majors[12].provenance.source


def test_a_cpu_plan_prefers_an_older_cpu_build_to_a_cuda_build_dragging_libraries(
    describe, kb
) -> None:  # type: ignore[no-untyped-def]
    # the default index has torch 2.7.1 for linux-64 only as its CUDA build (it requires the
    # nvidia-* wheels); PyTorch's CPU index has 2.6.0+cpu: on a CPU machine the older CPU build
    # wins, the CUDA one is the last resort
    from gpuenv.resolve.target import Availability

    seen = Availability(versions={"torch": {"2.7.1": ("default",), "2.6.0+cpu": ("cpu",)}})
    plan = resolve(describe(None, None, "linux"), ["torch"], kb=kb, available=seen)
    assert (plan.frameworks["torch"].version, plan.frameworks["torch"].variant) == ("2.6.0", "cpu")
    only = Availability(versions={"torch": {"2.7.1": ("default",)}})
    last_resort = resolve(describe(None, None, "linux"), ["torch"], kb=kb, available=only)
    assert last_resort.frameworks["torch"].version == "2.7.1"


def _tensorflow_cpu_listed_first(text: str) -> str:
    """TensorFlow 2.15.1 with its tensorflow-cpu row listed before the tensorflow CPU row, and
    published for win-64 as well: two CPU-only builds there, the other package's first."""
    release = text.index('version = "2.15.1"\n')
    own_head = '[[release.build]]\nvariant = "cpu"\nplatforms = ["linux-aarch64", "win-64"'
    cpu_head = (
        '[[release.build]]\nvariant = "cpu"\nplatforms = ["linux-64"]\npackage = "tensorflow-cpu"'
    )
    own = text.index(own_head, release)
    other = text.index(cpu_head, own)
    end = text.index("[[", other + len(cpu_head))
    moved = text[other:end].replace(
        'platforms = ["linux-64"]', 'platforms = ["linux-64", "win-64"]'
    )
    return text[:own] + moved + text[own:other] + text[end:]


def test_a_cpu_plan_takes_the_frameworks_own_package_before_another(
    tmp_path, monkeypatch, describe
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root, ignore=shutil.ignore_patterns("*.md"))
    path = root / "tensorflow.toml"
    path.write_text(
        _tensorflow_cpu_listed_first(path.read_text(encoding="utf-8")), encoding="utf-8"
    )
    kb = load_knowledge_base(root)
    release = next(r for r in kb.framework("tensorflow").releases if r.version == "2.15.1")
    on_windows = [b.package for b in release.builds if not b.is_gpu and "win-64" in b.platforms]
    assert on_windows == ["tensorflow-cpu", None]  # the edit: the other package first
    plan = resolve(describe(None, None, "windows"), ["tensorflow==2.15.1"], kb=kb)
    assert plan.frameworks["tensorflow"].package == "tensorflow"


def test_wsl2_advice_names_the_driver_its_own_choice_needs(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # wsl.advice with the WSL2 resolutions given: under the current driver, two builds are
    # refused for the driver, another first (needing 999.10) and the one WSL2 would run
    # (needing 600.10): the advice names the second
    from gpuenv.resolve import wsl
    from gpuenv.resolve.rejection import Rejection

    machine = describe("GeForce GTX 1080", "457.49", "windows")
    target = build_target(machine, kb)
    native = dataclasses.replace(
        resolve(machine, ["tensorflow"], kb=kb), fixes=(f"tensorflow{wsl.HINT}",)
    )
    best = resolve(wsl.as_wsl(machine, wsl.newest_driver(kb, target)), ["tensorflow"], kb=kb)
    now = resolve(wsl.as_wsl(machine, None), ["tensorflow"], kb=kb)
    there = best.frameworks["tensorflow"]
    assert there.gpu and not now.frameworks["tensorflow"].gpu
    refused = [
        Rejection("tensorflow", "1.0.0", "cuda", "driver", "older", needs_driver="999.10"),
        Rejection(
            "tensorflow", there.version, there.variant, "driver", "it", needs_driver="600.10"
        ),
    ]

    def resolve_for(_machine, driver):  # type: ignore[no-untyped-def]
        return (now, refused) if driver is None else (best, [])

    line = wsl.advice(native, target, resolve_for, machine, kb)["tensorflow"]
    assert "after updating the Windows driver to ≥ 600.10 (R" in line, line


def test_tensorflows_plain_wheel_run_on_the_cpu_is_no_last_resort(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # the sources publish tensorflow 2.15.1 and 2.14.1, but tensorflow-cpu only for 2.14.1:
    # 2.15.1's plain wheel (GPU code, no CUDA libraries of its own) runs on the CPU and is
    # planned before an older release, and says what it carries
    from gpuenv.resolve.target import Availability

    seen = Availability(
        versions={
            "tensorflow": {"2.15.1": ("default",), "2.14.1": ("default",)},
            "tensorflow-cpu": {"2.14.1": ("default",)},
        }
    )
    plan = resolve(describe(None, None, "linux"), ["tensorflow"], kb=kb, available=seen)
    tf = plan.frameworks["tensorflow"]
    assert (tf.version, tf.variant, tf.gpu) == ("2.15.1", "cuda", False)
    assert any(
        w.startswith(
            "tensorflow 2.15.1 [cuda] is a CUDA build: it runs on the CPU, and carries GPU code it will not use"
        )
        for w in plan.warnings
    ), plan.warnings
