"""On a GPU machine, each release's way to run on the CPU is weighed only when no combination
keeps every framework on the GPU (resolver: the search meets all of those first), and the plan
is the one weighing everything first would give, refusals and their order included."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import gpuenv.resolve.candidates as candidates_module
import gpuenv.resolve.resolver as resolver
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.resolver import resolve

GPUS = ("GeForce 940M", "GTX 1080 Ti", "H100")
DRIVERS = ("450.80.02", "580.65.06")
REQUESTS = (
    ("torch", "tensorflow"),
    ("torch", "tensorflow", "jax"),
    ("tensorflow-cpu<2.11", "torch"),
)


def _answer(machine: Machine, request: tuple[str, ...], kb: KnowledgeBase) -> str:
    """The whole plan, rejected candidates and their order included; or the refusal."""
    try:
        plan = resolve(machine, request, kb=kb)
    except Exception as exc:  # an infeasible request must be refused in the same words
        return f"{type(exc).__name__}: {exc}"
    return json.dumps(plan.to_json(with_rejected=True), sort_keys=True)


@pytest.mark.parametrize("os_name", ["linux", "wsl"])
def test_the_plan_is_the_one_weighing_every_cpu_fallback_first_gives(
    os_name: str, describe: Any, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    fallbacks: list[str] = []
    real = candidates_module.cpu_fallbacks

    def counted(*args: Any) -> Any:
        fallbacks.append(args[2].framework)
        return real(*args)

    monkeypatch.setattr(resolver, "cpu_fallbacks", counted)
    took: set[bool] = set()  # whether a case needed the CPU fallbacks
    for gpu, driver, request in itertools.product(GPUS, DRIVERS, REQUESTS):
        machine = describe(gpu=gpu, driver=driver, os_name=os_name)
        before = len(fallbacks)
        later = _answer(machine, request, kb)
        took.add(len(fallbacks) > before)
        with monkeypatch.context() as eager:  # every CPU option weighed up front, as before
            eager.setattr(resolver, "cpu_explains", lambda *_: True)
            assert later == _answer(machine, request, kb), (gpu, driver, os_name, request)
    assert took == {True, False}  # plans that fit on the GPU, and plans that needed the rest


def test_a_stack_that_fits_on_the_gpu_weighs_no_cpu_build(
    describe: Any, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    weighed: list[bool] = []
    real = candidates_module.evaluate

    def evaluate(*args: Any, on_cpu: bool = False) -> Any:
        weighed.append(on_cpu or not args[4].is_gpu)
        return real(*args, on_cpu=on_cpu)

    monkeypatch.setattr(candidates_module, "evaluate", evaluate)
    machine = describe(gpu="RTX 3090", driver="535.183.01", os_name="linux")
    plan = resolve(machine, ("torch", "tensorflow"), kb=kb)
    assert all(choice.gpu for choice in plan.frameworks.values())
    assert weighed and not any(weighed)


def test_the_cpu_fallbacks_are_cpu_candidates_alone(describe: Any, kb: KnowledgeBase) -> None:
    """What the search adds once every GPU combination failed: never a GPU candidate again."""
    from gpuenv.resolve.requirements import parse_requirements
    from gpuenv.resolve.target import build_target

    machine = describe(gpu="RTX 3090", driver="580.65.06", os_name="linux")
    target = build_target(machine, kb)
    for req in parse_requirements(["torch", "tensorflow", "jax"]):
        fallbacks = candidates_module.cpu_fallbacks(kb, target, req)
        assert fallbacks and not any(c.on_gpu for c in fallbacks), req.framework
