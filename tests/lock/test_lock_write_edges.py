"""The lock writers at their edges (mutation area lock-write): what a lockfile records of the
conda solution, and how a stale lock names what changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpuenv.lock.conda import CondaArtifact
from gpuenv.lock.conda_lock.write import build_lockfile
from gpuenv.lock.model import LockInputs
from gpuenv.lock.pipeline import plan_changes
from gpuenv.resolve.plan import Plan
from installrepos import jax_plan
from lockdata import conda_record


def _linux(plan: Plan, python: str = "3.12") -> Plan:
    return dataclasses.replace(plan, platform="linux-64", python=python)


def test_virtual_packages_of_the_solution_are_skipped_not_the_rest() -> None:
    # rattler's solution lists the machine's virtual packages (__cuda, __glibc) among the
    # others, in its own order: each is left out, and every real package after it is kept
    plan = _linux(jax_plan("0.4.30", conda=("cudatoolkit=11.2", "cudnn=8.1")))
    inputs = LockInputs(plan, ("https://conda.example/main",), False, None, ())
    records = [
        conda_record("__glibc", "2.35"),
        conda_record("cudatoolkit", "11.2.2"),
        conda_record("__cuda", "12.4"),
        conda_record("cudnn", "8.1.0"),
    ]
    doc = build_lockfile(inputs, [], [CondaArtifact(r) for r in records])
    assert [p["name"] for p in doc["package"] if p["manager"] == "conda"] == [
        "cudatoolkit",
        "cudnn",
    ]


def test_a_stale_lock_names_a_python_change_and_nothing_when_equal() -> None:
    old = _linux(jax_plan("0.4.30"), "3.12")
    assert plan_changes(old, old) == []
    assert plan_changes(old, _linux(old, "3.11")) == ["Python 3.12 -> 3.11"]
    assert plan_changes(_linux(old, "3.11"), old) == ["Python 3.11 -> 3.12"]


def test_a_wheel_on_a_local_index_listed_after_others_is_portable(tmp_path: Path) -> None:
    from gpuenv.lock.portability import Sources, not_portable
    from gpuenv.lock.pypi import PipArtifact
    from localrepos import build_simple_index, build_wheel

    wheel = build_wheel(tmp_path / "built", "labtools", "1.0")
    index = build_simple_index(tmp_path / "index", [wheel])
    served = tmp_path / "index" / "files" / wheel.name
    art = PipArtifact("labtools", "1.0", served.as_uri(), "a" * 64, None)
    # a remote index and a local one that cannot be read come first: the next is still asked
    gone = (tmp_path / "gone").as_uri() + "/simple/"
    others_first = Sources(indexes=("https://mirror.example/simple/", gone, index))
    assert not_portable([art], others_first) == {}
    assert not_portable([art], Sources(indexes=("https://mirror.example/simple/",))) == {
        "labtools": f"a local file ({served}) on no index"
    }
