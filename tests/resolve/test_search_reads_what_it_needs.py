"""On a GPU machine the search evaluates a framework's GPU builds only as far as it reads them
(gpuenv.resolve.ranked): the plan is the one evaluating every build gives, its reasons, warnings
and fixes included; only the list of rejected candidates is shorter, and `resolve` lists it
only with -v, whole."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from tests.conftest import run_gpuenv

import gpuenv.resolve.candidates as candidates_module
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.ranked import Ranked
from gpuenv.resolve.resolver import resolve

GPUS = ("GeForce 940M", "GTX 1080 Ti", "RTX 3090", "H100")
DRIVERS = ("418.39", "535.183.01", "580.65.06")
# native Windows resolves again for its WSL2 advice: fewer machines, the same requests
WINDOWS = (("GeForce 940M", "RTX 3090"), ("470.82.01", "580.65.06"))
REQUESTS = (
    ("torch",),
    ("torch", "tensorflow"),
    ("torch", "tensorflow", "jax"),
    ("tensorflow<2.11", "torch"),
    ("jax[cuda12]", "torch==2.1.2"),
    ("torch==1.4.0", "tensorflow>=2.16"),  # no combination fits: refused
)


def _answer(
    machine: Machine, request: tuple[str, ...], kb: KnowledgeBase, every: bool, **flags: Any
) -> Any:
    try:
        plan = resolve(machine, request, kb=kb, every_rejection=every, **flags)
    except Exception as exc:  # a refusal must be the same words
        return f"{type(exc).__name__}: {exc}", []
    data = plan.to_json(with_rejected=True)
    return json.dumps({**data, "rejected": None}, sort_keys=True), data["rejected"]


@pytest.mark.parametrize("os_name", ["linux", "windows", "wsl"])
def test_the_plan_is_the_one_evaluating_every_build_gives(
    os_name: str, describe: Any, kb: KnowledgeBase
) -> None:
    shorter = 0
    gpus, drivers = WINDOWS if os_name == "windows" else (GPUS, DRIVERS)
    for gpu, driver, request in itertools.product(gpus, drivers, REQUESTS):
        machine = describe(gpu=gpu, driver=driver, os_name=os_name)
        where = (gpu, driver, os_name, request)
        lazy, met = _answer(machine, request, kb, every=False)
        whole, every = _answer(machine, request, kb, every=True)
        assert lazy == whole, where
        assert _per_framework_prefix(met, every), where  # what the search met, in its order
        assert len(met) <= len(every), where
        shorter += len(met) < len(every)
    assert shorter > 10  # the case is worth checking: most plans stop early


CPU_REQUESTS = (*REQUESTS, ("tensorflow-cpu", "torch"), ("jax",), ("torch==2.1.2",))


@pytest.mark.parametrize("os_name", ["linux", "windows", "macos"])
def test_a_cpu_plan_is_the_one_evaluating_every_build_gives(
    os_name: str, describe: Any, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluated = _counting_evaluations(monkeypatch)
    fewer = 0
    cases: list[tuple[Any, dict[str, Any]]] = [(None, {})]
    if os_name != "macos":  # no NVIDIA GPU there to leave unused
        cases.append(("RTX 3090", {"no_gpu": True}))
    for (gpu, flags), request in itertools.product(cases, CPU_REQUESTS):
        machine = describe(gpu=gpu, driver="580.65.06" if gpu else None, os_name=os_name)
        where = (gpu, flags, os_name, request)
        evaluated.clear()
        lazy, met = _answer(machine, request, kb, False, **flags)
        lazily = len(evaluated)
        whole, every = _answer(machine, request, kb, True, **flags)
        assert lazy == whole, where
        assert _per_framework_prefix(met, every) and len(met) <= len(every), where
        fewer += lazily < len(evaluated) - lazily  # the whole run evaluated both
    assert fewer > len(cases) * len(CPU_REQUESTS) / 2  # the case is worth checking


def _per_framework_prefix(met: list[Any], every: list[Any]) -> bool:
    for framework in {r["candidate"].split()[0] for r in every}:
        mine = [r for r in every if r["candidate"].split()[0] == framework]
        seen = [r for r in met if r["candidate"].split()[0] == framework]
        if seen != mine[: len(seen)]:
            return False
    return True


def _counting_evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    evaluated: list[str] = []
    real = candidates_module.evaluate

    def counted(*args: Any, **kwargs: Any) -> Any:
        evaluated.append(args[3].version)
        return real(*args, **kwargs)

    monkeypatch.setattr(candidates_module, "evaluate", counted)
    return evaluated


def _gpu_builds(kb: KnowledgeBase, *names: str) -> int:
    return sum(
        1
        for name in names
        for release in kb.framework(name).releases
        for build in release.builds
        if build.is_gpu
    )


def test_a_plan_that_fits_evaluates_few_gpu_builds(
    describe: Any, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluated = _counting_evaluations(monkeypatch)
    machine = describe(gpu="RTX 3090", driver="535.183.01", os_name="linux")
    plan = resolve(machine, ("torch", "tensorflow"), kb=kb, every_rejection=False)
    assert all(choice.gpu for choice in plan.frameworks.values())
    # the newest releases, not all 150
    assert 0 < len(evaluated) < _gpu_builds(kb, "torch", "tensorflow") / 4


@pytest.mark.parametrize("verbose", [False, True])
def test_the_resolve_command_evaluates_every_build_only_with_v(
    verbose: bool, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from gpuenv.cli import cli

    evaluated = _counting_evaluations(monkeypatch)
    args = ["resolve", "torch", "--gpu", "8.6", "--driver", "535.183.01", "--os", "linux"]
    result = CliRunner().invoke(cli, [*args, "--json", *(["-v"] if verbose else [])])
    assert result.exit_code == 0, result.output
    everything = len(evaluated) >= _gpu_builds(kb, "torch")
    assert everything == verbose


def _resolve_json(*extra: str) -> dict[str, Any]:
    result = run_gpuenv(
        "resolve", "torch", "tensorflow", "--gpu", "8.6", "--driver", "535.183.01", "--os",
        "linux", "--json", *extra,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_resolve_lists_the_rejected_candidates_with_v_only_and_then_all_of_them() -> None:
    quiet, verbose = _resolve_json(), _resolve_json("-v")
    assert "rejected" not in quiet
    assert quiet["sources"] and quiet["reasons"]
    explained = run_gpuenv(
        "explain", "torch", "tensorflow", "--gpu", "8.6", "--driver", "535.183.01", "--os",
        "linux", "--json",
    )  # fmt: skip
    assert explained.returncode == 0, explained.stderr
    whole = json.loads(explained.stdout)["plan"]["rejected"]
    assert verbose["rejected"] == whole and len(whole) > 50
    assert {k: v for k, v in verbose.items() if k != "rejected"} == quiet


def test_ranked_reads_its_source_only_as_far_as_it_is_asked() -> None:
    made: list[int] = []

    def source() -> Any:
        for n in range(5):
            made.append(n)
            yield n

    ranked = Ranked(source())
    assert ranked[1] == 1 and made == [0, 1]
    with pytest.raises(IndexError):
        ranked[-1]  # from the end: only a whole list knows where that is
    with pytest.raises(IndexError):
        ranked[5]
    assert ranked.drain() == [0, 1, 2, 3, 4] and made == [0, 1, 2, 3, 4]
