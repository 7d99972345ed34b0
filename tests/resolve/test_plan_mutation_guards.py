"""What resolve's plan says where no other test looked (resolve-plan's mutation survivors,
benchmarks/mutation/resolve-plan.md): a driver fix keeps its promise, only an old stack is
locked "as of" its era, the tally of newer rejections needs more than one, an unknown extra is
refused, an impossible requirement is explained by its own framework's rejections, a pin the
conflict check cannot read is skipped, and plans keep schema 1."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from gpuenv.resolve import resolve
from gpuenv.resolve.combine import conflict
from gpuenv.resolve.plan import Plan
from gpuenv.resolve.rejection import Candidate
from gpuenv.resolve.requirements import RequirementError

REPO = Path(__file__).resolve().parents[2]
GPU = "RTX 3090"


def _label(plan: Plan, framework: str) -> str:
    choice = plan.frameworks[framework]
    return f"{framework} {choice.version} [{choice.variant}]"


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_the_smallest_driver_fix_keeps_its_promise(framework: str, describe, kb) -> None:  # type: ignore[no-untyped-def]
    """'driver >= X already allows L': with driver X installed, L is the plan."""
    plan = resolve(describe(GPU, "450.80.02"), [framework], kb=kb)
    promises = [re.search(r"driver ≥ (\S+) already allows (.+)$", f) for f in plan.fixes]
    [(driver, label)] = [m.groups() for m in promises if m]
    assert _label(resolve(describe(GPU, driver), [framework], kb=kb), framework) == label
    assert label != _label(plan, framework)


def test_only_a_stack_without_its_newest_release_is_locked_as_of_its_era(describe, kb) -> None:  # type: ignore[no-untyped-def]
    newest = resolve(describe(GPU, "580.65.06"), ["torch"], kb=kb)
    assert newest.frameworks["torch"].version == kb.frameworks["torch"].releases[0].version
    assert newest.exclude_newer is None
    older = resolve(describe(GPU, "525.60.13"), ["torch"], kb=kb)
    assert older.frameworks["torch"].version != newest.frameworks["torch"].version
    assert older.exclude_newer is not None and re.fullmatch(r"\d{4}-\d\d-\d\d", older.exclude_newer)
    oldest = kb.frameworks["torch"].releases[-1].version
    assert resolve(describe(), [f"torch=={oldest}"], kb=kb).exclude_newer is not None


def test_the_tally_of_newer_rejections_needs_more_than_one(describe, kb) -> None:  # type: ignore[no-untyped-def]
    one = resolve(describe(GPU, "525.60.13"), ["torch"], kb=kb)
    [line] = [r for r in one.reasons if r.startswith("torch ")]
    assert "; newer: torch 2.15.0 [cu132] rejected" in line
    assert "in all" not in line
    many = resolve(describe(GPU, "450.80.02"), ["torch"], kb=kb)
    [line] = [r for r in many.reasons if r.startswith("torch ")]
    assert re.search(r"; \d+ newer candidates rejected in all \(\d+ driver", line), line


def test_an_extra_no_build_provides_is_refused(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RequirementError, match="provides the extra nonsense; known: cpu, cu"):
        resolve(describe(GPU, "580.65.06"), ["torch[nonsense]"], kb=kb)
    plan = resolve(describe(GPU, "580.65.06"), ["jax[cuda12]"], kb=kb)
    assert plan.frameworks["jax"].variant == "cuda12"


@pytest.mark.parametrize("reqs", [["torch>=99", "jax"], ["jax", "torch>=99"]])
def test_an_impossible_requirement_is_explained_by_its_own_framework(
    reqs: list[str],
    describe: Any,
    kb: Any,
) -> None:
    from gpuenv.resolve import ResolveError

    # at this driver jax's newest build is rejected (it needs a newer one): a rejection of
    # another framework, which must not stand in for torch's
    assert any(
        "jax 0.12.1" in r.candidate
        for r in resolve(describe(GPU, "525.60.13"), ["jax"], kb=kb).rejected
    )
    with pytest.raises(ResolveError) as err:
        resolve(describe(GPU, "525.60.13"), reqs, kb=kb)
    text = str(err.value)
    assert "torch>=99: no release runs here; e.g. torch " in text
    assert "does not satisfy 'torch>=99'" in text
    assert "jax" not in text


def test_a_pin_the_conflict_check_cannot_read_is_skipped(kb) -> None:  # type: ignore[no-untyped-def]
    """A direct reference (`name @ URL`) is no pin to compare: the check passes over it and
    still finds the clash among the pins it can read."""
    torch, jax = kb.frameworks["torch"].releases[0], kb.frameworks["jax"].releases[0]
    tb = next(b for b in torch.builds if b.is_gpu)
    jb = next(b for b in jax.builds if b.is_gpu)

    def cand(release: Any, build: Any, companions: tuple[str, ...]) -> Candidate:
        return Candidate(release, build, ("3.12",), (), companions, (), True)

    url = "nvidia-x @ https://files.example/nvidia_x-1.0-py3-none-any.whl"
    a = cand(torch, tb, (url,))
    b = cand(jax, jb, ("nvidia-x==1.0",))
    assert conflict([a, b], kb) is None
    clash = conflict(
        [cand(torch, tb, (url, "nvidia-y==1.0")), cand(jax, jb, ("nvidia-y==2.0",))], kb
    )
    assert clash is not None and "nvidia-y" in str(clash)


def test_plans_keep_schema_1(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """The committed lockfiles (and every lockfile written so far) carry plans of schema 1:
    a plan is written with it and read back from them."""
    import yaml

    plan = resolve(describe(GPU, "580.65.06"), ["torch"], kb=kb)
    assert plan.to_json()["schema"] == 1
    assert Plan.from_json(plan.to_json()) == plan
    data = yaml.safe_load((REPO / "lockfiles" / "cpu-only.conda-lock.yml").read_text())
    from lockdata import plan_of

    committed = plan_of(data)
    assert committed["schema"] == 1
    assert Plan.from_json(committed).platform == committed["platform"]
    with pytest.raises(ValueError):
        Plan.from_json({**committed, "schema": 2})


def test_a_labelled_build_keeps_its_index_when_the_index_is_where_it_was_found(
    describe, kb
) -> None:  # type: ignore[no-untyped-def]
    """When the lock probed the sources, a labelled build is routed to its framework index
    if that index has it; one only a mirror has is pinned without the index."""
    from gpuenv.resolve.target import Availability

    machine = describe(GPU, "450.80.02")
    [pin] = [
        r for r in resolve(machine, ["torch"], kb=kb).pip if r.requirement.startswith("torch==")
    ]
    assert pin.requirement == "torch==2.7.1+cu118" and pin.index
    for sources, index in (
        ((pin.index.rstrip("/") + "/torch/",), pin.index),
        (("https://mirror.example/simple/torch/", pin.index.rstrip("/") + "/torch/"), pin.index),
        (("https://mirror.example/simple/torch/",), None),
    ):
        available = Availability(versions={"torch": {"2.7.1+cu118": sources}})
        plan = resolve(machine, ["torch"], kb=kb, available=available)
        [got] = [r for r in plan.pip if r.requirement.startswith("torch==")]
        assert (got.requirement, got.index) == ("torch==2.7.1+cu118", index)


def test_require_gpu_without_a_gpu_says_what_detection_noted(describe, kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.resolve import ResolveError

    bare = describe()
    with pytest.raises(ResolveError) as err:
        resolve(bare, ["torch"], kb=kb, require_gpu=True)
    assert str(err.value) == "--require-gpu: no NVIDIA GPU on this machine"
    noted = dataclasses.replace(bare, notes=("nvidia-smi: not found", "no /dev/nvidia0"))
    with pytest.raises(ResolveError) as err:
        resolve(noted, ["torch"], kb=kb, require_gpu=True)
    assert str(err.value) == (
        "--require-gpu: no NVIDIA GPU on this machine (nvidia-smi: not found; no /dev/nvidia0)"
    )


@pytest.mark.parametrize(
    "texts", [["jax", "tensorflow", "torch"], ["tensorflow", "jax", "torch"], ["torch", "jax"]]
)
def test_requirements_come_out_torch_tensorflow_jax_whatever_their_order(texts: list[str]) -> None:
    from gpuenv.resolve.requirements import parse_requirements

    order = [r.framework for r in parse_requirements(texts)]
    assert order == [f for f in ("torch", "tensorflow", "jax") if f in texts]


def test_a_framework_kept_off_the_gpu_by_the_combination_says_so(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """On this Windows machine tensorflow's GPU build and jax's share no Python: the one
    pushed to the CPU says it is the combination, not that no GPU build of it runs here."""
    plan = resolve(describe("GTX 1080", "450.80.02", "windows"), ["tensorflow", "jax"], kb=kb)
    [line] = [w for w in plan.warnings if w.startswith("tensorflow ") and " on the CPU: " in w]
    assert "no combination keeps tensorflow and jax all on the GPU in one environment" in line
    assert "gpuenv setup --split tensorflow jax" in line
    # the clash named is the best-ranked combination's: the jax the plan chose, beside the
    # newest tensorflow GPU build (not a later combination's older jax)
    jax = plan.frameworks["jax"]
    assert f"; jax {jax.version} [{jax.variant}]: " in line, line


def test_a_plan_read_back_keeps_every_field(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """A lockfile's plan is read back for `gpuenv lock --check` and `explain`: its fixes,
    warnings and reasons are all there (this machine has fixes and rejections)."""
    import json

    plan = resolve(describe(GPU, "450.80.02"), ["torch", "jax"], kb=kb)
    assert plan.fixes and plan.reasons and plan.rejected
    again = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert again == plan
    assert again.fixes == plan.fixes


def test_explain_counts_only_the_rejections_outside_the_requested_range(describe, kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.resolve.plan import RejectedCandidate
    from gpuenv.resolve.report import render

    plan = resolve(describe(GPU, "580.65.06"), ["torch"], kb=kb)
    rejected = (
        RejectedCandidate("torch 9.0.0 [cu999]", "driver", "needs driver 999"),
        RejectedCandidate("torch 8.0.0 [cu999]", "arch", "no sm_86"),
        RejectedCandidate("torch 7.0.0 [cu999]", "requirement", "outside the range"),
        RejectedCandidate("torch 6.0.0 [cu999]", "requirement", "outside the range"),
        RejectedCandidate("torch 5.0.0 [cu999]", "unavailable", "no source has it"),
    )
    text = render(dataclasses.replace(plan, rejected=rejected), explain=True)
    assert "(2 more outside the requested version ranges)" in text
    shown = [ln for ln in text.splitlines() if ln.startswith("  x ")]
    assert [ln.split()[2] for ln in shown] == ["9.0.0", "8.0.0", "5.0.0"]


@pytest.mark.parametrize("reqs", [["jax>=99", "torch"], ["torch", "jax>=99"]])
def test_an_impossible_jax_is_explained_by_jax_s_rejections_alone(
    reqs: list[str], describe: Any, kb: Any
) -> None:
    """Frameworks sorting after jax (tensorflow, torch) have rejections here too (torch
    2.15.0 needs a newer driver): none stands in for jax's."""
    from gpuenv.resolve import ResolveError

    with pytest.raises(ResolveError) as err:
        resolve(describe(GPU, "525.60.13"), reqs, kb=kb)
    text = str(err.value)
    assert "jax>=99: no release runs here; e.g. jax " in text
    assert "torch" not in text


def test_extra_packages_merge_one_per_project_the_later_group_winning() -> None:
    from gpuenv.resolve.packages import merge_packages

    assert merge_packages() == ()
    assert merge_packages((), ()) == ()
    assert merge_packages(("numpy>=1.26", "pandas"), ("NumPy==2.0.0", "scipy")) == (
        "NumPy==2.0.0",
        "pandas",
        "scipy",
    )
    assert merge_packages(("Foo_Bar[x]>=1",), ()) == ("Foo_Bar[x]>=1",)


def test_a_labelled_jax_build_routes_its_jaxlib_to_the_build_s_index(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """jax[cuda12_pip] 0.4.13: jax itself is pure Python from the default index; the labelled
    jaxlib (+cuda12.cudnn89) comes from the find-links page the build names."""
    plan = resolve(describe(GPU, "535.54.03"), ["jax==0.4.13"], kb=kb)
    pins = {r.requirement: r.index for r in plan.pip if r.requirement.startswith(("jax", "jaxlib"))}
    page = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"
    assert pins == {"jax[cuda12_pip]==0.4.13": None, "jaxlib==0.4.13+cuda12.cudnn89": page}


def test_two_builds_of_one_library_are_named_in_the_order_they_were_chosen(kb) -> None:  # type: ignore[no-untyped-def]
    torch = next(r for r in kb.frameworks["torch"].releases if r.version == "2.14.1")
    jax = next(r for r in kb.frameworks["jax"].releases if r.version == "0.12.1")
    tb = next(b for b in torch.builds if b.variant == "cu126")  # nvidia-cudnn-cu12
    jb = next(b for b in jax.builds if b.variant == "cuda13")  # nvidia-cudnn-cu13
    a = Candidate(torch, tb, ("3.12",), (), (), (), True)
    b = Candidate(jax, jb, ("3.12",), (), (), (), True)
    first = conflict([a, b], kb)
    assert first is not None
    assert first.message.startswith("cudnn: torch 2.14.1 [cu126] takes nvidia-cudnn-cu12, jax")
    second = conflict([b, a], kb)
    assert second is not None
    assert second.message.startswith("cudnn: jax 0.12.1 [cuda13] takes nvidia-cudnn-cu13")


@pytest.mark.parametrize(
    ("os_name", "family"), [("linux", "linux"), ("wsl", "wsl"), ("windows", "windows")]
)
def test_an_assumed_os_is_named_as_the_host_s(os_name: str, family: str, describe, kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.resolve.assumptions import assumptions

    machine = describe(GPU, "580.65.06", os_name)
    plan = resolve(machine, ["torch"], kb=kb)
    said = assumptions(
        kb, machine, plan, driver_assumed=False, python_assumed=False, os_assumed=True
    )
    [os_line] = [a for a in said if a.fact == "os"]
    assert os_line.value == family
    assert f"planned for {family}, this host's OS" in os_line.line
