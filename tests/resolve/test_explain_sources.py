"""`explain` cites the rows its decisions rest on.

Expected facts from primary sources, not from recipes/:
- cuDNN 9.11 dropped kernels below compute capability 7.5 (cuDNN 9.11.0 release notes; the
  9.10.2 support matrix still lists 5.0+): a Pascal GPU (6.1) with a jax build whose CUDA
  wheels accept any cuDNN 9 must be capped below 9.11.
- Blackwell needs an R570 driver (NVIDIA's CUDA Toolkit, Driver, and Architecture Matrix:
  first toolkit CUDA 12.8; CUDA 12.8 GA driver 570.26).
"""

from __future__ import annotations

import dataclasses

from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan
from gpuenv.resolve.report import render


def test_a_cudnn_cap_says_why_and_cites_its_source(kb, describe) -> None:
    plan = resolve(describe("GeForce GTX 1080 Ti", "580.95.05", "linux"), ["jax"], kb=kb)
    assert plan.frameworks["jax"].gpu  # jax's CUDA 12 wheels still carry sm_60 (jax .bazelrc)
    assert "nvidia-cudnn-cu12<9.11" in plan.constraints
    why = next(r for r in plan.reasons if r.startswith("cap nvidia-cudnn-cu12<9.11"))
    assert "7.5" in why and "6.1" in why and "source: " in why
    assert "docs.nvidia.com/deeplearning/cudnn" in why


def test_every_deciding_rejection_names_its_source(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 5090", "550.54.14", "linux"), ["torch"], kb=kb)
    deciding = [r for r in plan.rejected if r.rule != "requirement"]
    assert deciding and all(r.source for r in deciding)
    driver = next(r for r in deciding if r.rule == "driver")
    assert "cuda-toolkit-driver-and-architecture-matrix" in driver.source


def test_the_choice_cites_its_rows(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), ["torch"], kb=kb)
    assert len(plan.sources) == 1 and plan.sources[0].startswith("torch ")
    assert "build" in plan.sources[0] and "architectures" in plan.sources[0]


def _edit_newest(kb: KnowledgeBase, **changes: object) -> KnowledgeBase:
    torch = kb.frameworks["torch"]
    newest = dataclasses.replace(torch.releases[0], **changes)  # type: ignore[arg-type]
    releases = (newest, *torch.releases[1:])
    return dataclasses.replace(
        kb, frameworks={**kb.frameworks, "torch": dataclasses.replace(torch, releases=releases)}
    )


def test_a_rejection_on_incomplete_data_says_so(kb, describe) -> None:
    newest = kb.frameworks["torch"].releases[0]
    linux_only = tuple(
        dataclasses.replace(b, platforms=tuple(p for p in b.platforms if p != "win-64"))
        for b in newest.builds
    )
    machine = describe("GeForce RTX 4090", "581.57", "windows")
    for complete in (False, True):
        edited = _edit_newest(kb, builds=linux_only, builds_complete=complete)
        plan = resolve(machine, ["torch"], kb=edited)
        mine = [r for r in plan.rejected if r.candidate.startswith(f"torch {newest.version} ")]
        assert mine and all(r.rule == "platform" for r in mine)
        flagged = [r for r in mine if "incomplete" in r.caveat]
        assert bool(flagged) is not complete


def test_a_rejection_on_unverified_data_says_so(kb, describe) -> None:
    newest = kb.frameworks["torch"].releases[0]
    gpu_builds = [b for b in newest.builds if b.archs is not None]
    assert gpu_builds
    doubtful = tuple(
        dataclasses.replace(
            b,
            archs=dataclasses.replace(
                b.archs,
                provenance=dataclasses.replace(b.archs.provenance, verified=False, note="x"),
            ),
        )
        if b.archs is not None
        else b
        for b in newest.builds
    )
    plan = resolve(
        describe("Tesla K80", "470.256.02", "linux"),
        ["torch"],
        kb=_edit_newest(kb, builds=doubtful),
    )
    arch = [
        r
        for r in plan.rejected
        if r.candidate.startswith(f"torch {newest.version} ") and r.rule == "gpu-arch"
    ]
    assert arch and all("not verified" in r.caveat for r in arch)


def test_explain_output_numbers_sources_and_survives_json(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 5090", "550.54.14", "linux"), ["torch"], kb=kb)
    text = render(plan, explain=True)
    assert "Sources of the rejections:" in text and "  [1] " in text
    assert "Sources of the choice:" in text
    again = Plan.from_json(plan.to_json())
    assert again.rejected == plan.rejected and again.sources == plan.sources
    # what a lockfile pins leaves explanations out: a reworded source changes no lockfile
    pinned = plan.to_json(with_rejected=False)
    assert "sources" not in pinned and "rejected" not in pinned


def test_explain_cli_cites_sources(gpuenv_cli) -> None:
    result = gpuenv_cli("explain", "torch", "--gpu", "GeForce RTX 5090", "--driver", "560.94")
    assert result.returncode == 0, result.stderr
    assert "Sources of the rejections:" in result.stdout


def test_a_native_windows_refusal_cites_where_windows_gpu_builds_end(kb, describe) -> None:
    """TensorFlow's install docs (source_windows.md) say 2.10 is the last native-Windows GPU
    release: a newer release's CUDA build is refused citing that row, not its release date."""
    plan = resolve(describe("GeForce 940M", "457.49", "windows"), ["tensorflow>=2.11"], kb=kb)
    refused = next(
        r
        for r in plan.rejected
        if r.rule == "platform" and r.candidate.endswith("[cuda]") and "native Windows" in r.message
    )
    assert "source_windows.md" in refused.source
    assert not refused.source.startswith("Release date")
