"""The plan's own parts at their edges (mutation area resolve-plan): what a plan needs of the
driver, what its JSON keeps, how explain counts."""

from __future__ import annotations

from gpuenv.machine import parse_driver_version
from gpuenv.resolve import resolve
from gpuenv.resolve.assumptions import plan_min_driver
from gpuenv.resolve.explain import span
from gpuenv.resolve.plan import Plan


def test_a_new_generations_first_driver_counts_in_what_the_plan_needs(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # Blackwell's first driver (R570) is newer than CUDA 12's minor-version floor
    blackwell = kb.generation_for("12.0")
    first = blackwell.min_driver("linux")
    # torch 2.7.1 is built with CUDA 12.8, the first with Blackwell code
    plan = resolve(describe("GeForce RTX 5090", "580.95.05", "linux"), ["torch==2.7.1"], kb=kb)
    cuda = plan.frameworks["torch"].cuda or ""
    floor = kb.cuda_majors[int(cuda.split(".")[0])].min_driver_linux
    assert parse_driver_version(first) > parse_driver_version(floor)
    assert plan_min_driver(kb, plan) == first


def test_a_plan_read_back_keeps_its_knowledge_base(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch"], kb=kb)
    assert plan.knowledge_base
    assert Plan.from_json(plan.to_json()).knowledge_base == plan.knowledge_base


def test_a_span_of_one_version_is_that_version() -> None:
    assert span(["3.12"]) == "3.12"
    assert span(["3.9", "3.10", "3.11"]) == "3.9-3.11"
