"""The lock stage's fallback and staleness lines at their edges (mutation area lock-probe),
on plans made here and altered field by field."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from gpuenv.lock.availability import unreachable_that_mattered
from gpuenv.lock.fallback import check_fallback
from gpuenv.lock.load import load_locked
from gpuenv.lock.staleness import planned_at_lock, stale_causes
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan, RejectedCandidate
from gpuenv.resolve.target import Availability
from lockdata import write_valid


def _gpu_plan(describe: Any, kb: Any) -> Plan:
    return resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch"], kb=kb)


def _on_cpu(plan: Plan) -> Plan:
    data = plan.to_json()
    data["accelerator"] = "cpu"
    data["frameworks"]["torch"].update(variant="cpu", cuda=None, cudnn=None, gpu=False)
    return Plan.from_json(data)


def test_a_fallback_that_is_allowed_says_what_is_locked(describe, kb) -> None:  # type: ignore[no-untyped-def]
    ideal = _gpu_plan(describe, kb)
    [line] = check_fallback(ideal, _on_cpu(ideal), "cpu", cpu_flag="--allow-cpu-fallback")
    assert "(the planned build) cannot be locked" in line and "; locking torch " in line, line
    assert "would fall back" not in line


def test_only_another_python_is_a_python_line(describe, kb) -> None:  # type: ignore[no-untyped-def]
    ideal = dataclasses.replace(_gpu_plan(describe, kb), python="3.11")
    assert check_fallback(ideal, ideal, "gpu", cpu_flag="--allow-cpu-fallback") == []
    newer = dataclasses.replace(ideal, python="3.12")
    assert check_fallback(ideal, newer, "gpu", cpu_flag="--allow-cpu-fallback") == [
        "Python 3.11 (planned) cannot be locked; locking Python 3.12"
    ]


def test_only_unavailable_rejections_name_the_sources_that_mattered(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = _gpu_plan(describe, kb)
    host = "https://down.example/simple"
    available = Availability(versions={}, unreachable=(f"{host}: unreachable (timed out)",))
    unlockable = RejectedCandidate("torch 9.0.0 [cu999]", "unlockable", f"only on {host}")
    assert (
        unreachable_that_mattered(available, dataclasses.replace(plan, rejected=(unlockable,)))
        == []
    )
    missed = RejectedCandidate("torch 9.0.0 [cu999]", "unavailable", f"{host} did not answer")
    assert unreachable_that_mattered(available, dataclasses.replace(plan, rejected=(missed,))) == [
        f"{host}: unreachable (timed out)"
    ]


def _locked(tmp_path: Path, fallback: str = "") -> Any:
    locked = load_locked(write_valid(tmp_path / "valid.lock.yml"))
    return dataclasses.replace(locked, fallback=fallback)


def test_the_plan_before_a_fallback_reads_every_part(tmp_path: Path) -> None:
    locked = _locked(
        tmp_path, "Python 3.11 -> 3.12; companion pins changed; jax 0.4.31 [cpu] -> 0.4.30 [cpu]"
    )
    python, labels = planned_at_lock(locked)
    assert (python, labels["jax"]) == ("3.11", "0.4.31 [cpu]")


def test_staleness_names_the_knowledge_base_beside_a_stack_change(tmp_path: Path) -> None:
    locked = _locked(tmp_path)
    old = locked.plan
    assert old.knowledge_base
    data = old.to_json()
    data["frameworks"]["jax"]["version"] = "0.4.31"
    data["knowledge_base"] = "0" * 16  # a new knowledge base, read from JSON as the old one
    causes = stale_causes(locked, Plan.from_json(data))
    assert f"knowledge base {old.knowledge_base} -> {'0' * 16}" in causes, causes
    assert any(c.startswith("jax 0.4.30 [") and "-> 0.4.31 [" in c for c in causes), causes


def test_staleness_names_changed_companion_pins_alone(tmp_path: Path) -> None:
    locked = _locked(tmp_path)
    old = locked.plan
    pins = dataclasses.replace(old, companions=(*old.companions, "ml-dtypes==0.4.0"))
    assert stale_causes(locked, pins) == ["companion pins changed"]
    caps = dataclasses.replace(old, constraints=(*old.constraints, "cudnn<9"))
    assert stale_causes(locked, caps) == ["companion pins changed"]


def test_a_build_lost_to_another_python_says_so_and_only_then(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """A framework whose planned build no rule rejected and no other framework explains lost
    to the Python the sources gave: that is its reason when the Pythons differ (either way
    round), never when they are the same."""
    from gpuenv.lock.fallback import fallbacks

    ideal = dataclasses.replace(_gpu_plan(describe, kb), python="3.12")
    data = ideal.to_json()
    data["frameworks"]["torch"]["version"] = "2.0.0"
    older = dataclasses.replace(Plan.from_json(data), rejected=())
    for python in ("3.11", "3.13"):
        [fb] = fallbacks(ideal, dataclasses.replace(older, python=python))
        assert fb.why == f"it does not agree with Python {python}, which the other builds need"
    [fb] = fallbacks(ideal, dataclasses.replace(older, python="3.12"))
    assert fb.why == (
        "it does not agree with the other frameworks' builds (see the plan's trade-off lines)"
    )


def _two_frameworks(describe, kb) -> Plan:  # type: ignore[no-untyped-def]
    plan = resolve(describe("GeForce RTX 3090", "560.35.03", "linux"), ["torch", "jax"], kb=kb)
    assert len(plan.frameworks) == 2 and all(f.gpu for f in plan.frameworks.values())
    return plan


def _changed(plan: Plan, name: str, *, cpu: bool = False) -> Plan:
    data = plan.to_json()
    fw = data["frameworks"][name]
    fw["version"] = "0.0.1"
    if cpu:
        fw.update(variant="cpu", cuda=None, cudnn=None, gpu=False)
    return dataclasses.replace(Plan.from_json(data), rejected=())


def test_every_framework_after_an_unchanged_one_is_checked_for_a_fallback(describe, kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.lock.fallback import fallbacks

    ideal = _two_frameworks(describe, kb)
    first, last = list(ideal.frameworks)
    [fb] = fallbacks(ideal, _changed(ideal, last))
    assert fb.framework == last and fb.got == f"{last} 0.0.1 [{ideal.frameworks[last].variant}]"
    [fb] = fallbacks(ideal, _changed(ideal, first))
    assert fb.framework == first


def test_a_lost_gpu_is_warned_of_after_a_fallback_that_kept_it(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """The first framework falls back to another GPU build (no CPU warning), the second to
    the CPU: its warning names the build that was lost."""
    from gpuenv.lock.fallback import with_fallback_warnings

    ideal = _two_frameworks(describe, kb)
    first, last = list(ideal.frameworks)
    plan = _changed(_changed(ideal, first), last, cpu=True)
    warned = with_fallback_warnings(ideal, plan).warnings
    lost = [w for w in warned if w.startswith(f"{last} 0.0.1 will run on the CPU: ")]
    assert len(lost) == 1 and "(the planned build) cannot be locked" in lost[0]
    assert not [w for w in warned if w.startswith(f"{first} 0.0.1 will run on the CPU")]


def test_a_plan_read_back_from_a_lockfile_is_no_python_fallback(describe, kb) -> None:  # type: ignore[no-untyped-def]
    """The locked plan is read from the lockfile's JSON: its Python is an equal string, not
    the same object, and equal is what counts."""
    import json

    ideal = dataclasses.replace(_gpu_plan(describe, kb), python="3.11")
    read_back = Plan.from_json(json.loads(json.dumps(ideal.to_json())))
    assert read_back.python == ideal.python and read_back.python is not ideal.python
    assert check_fallback(ideal, read_back, "gpu", cpu_flag="--allow-cpu-fallback") == []
    assert check_fallback(ideal, read_back, "none", cpu_flag="--allow-cpu-fallback") == []
