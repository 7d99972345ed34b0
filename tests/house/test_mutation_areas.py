"""The mutation runs (scripts/maint/mutation.py) cover the code as it is laid out now: every
module of fs/, envs/, lock/, index/, resolve/ and doctor/ is mutated by exactly one area, and
every module and test an area names exists (issue 28: the resolve area went on naming rules.py
after its rules moved to gpu_rules.py, broken_rule.py and cudnn_rule.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "maint"))
import mutation  # noqa: E402


def test_every_module_of_the_covered_folders_is_in_one_area() -> None:
    assert mutation.uncovered() == []


@pytest.mark.parametrize("name", [*mutation.AREAS, "quick"])
def test_each_area_names_what_exists(name: str) -> None:
    area = mutation.QUICK[1] if name == "quick" else mutation.AREAS[name]
    assert [m for m in area.modules if not (ROOT / m).is_file()] == []
    tests = [t.split("::", 1)[0] for t in area.tests]
    assert [t for t in tests if not (ROOT / t).is_file()] == []
    # a mutant's tests never go online (the command deselects them; no area relies on them)
    network = ("test_lock_network.py", "test_overlap_network.py", "test_online.py")
    assert not [t for t in tests if t.endswith(network)]


def test_uncovered_names_a_module_no_area_has(monkeypatch: pytest.MonkeyPatch) -> None:
    areas = dict(mutation.AREAS)
    fs = areas["fs"]
    areas["fs"] = mutation.Area(fs.modules[1:], fs.tests)
    areas["twice"] = mutation.Area(fs.modules[1:2], ())
    monkeypatch.setattr(mutation, "AREAS", areas)
    assert mutation.uncovered() == [
        fs.modules[0],
        f"{fs.modules[1]} (in two areas)",
    ]


def test_the_sample_is_the_same_whatever_order_the_database_lists_the_mutants() -> None:
    """cosmic-ray lists its work items in no fixed order (new job ids at each init): the same
    seed must draw the same mutants all the same, so that two runs compare."""
    import random
    from types import SimpleNamespace

    def item(line: int, operator: str, job: str) -> SimpleNamespace:
        spec = SimpleNamespace(
            module_path=Path("m.py"), start_pos=(line, 0), operator_name=operator, occurrence=0
        )
        return SimpleNamespace(job_id=job, mutations=(spec,))

    def drawn(items: list[SimpleNamespace]) -> set[tuple[int, str]]:
        ids = mutation.draw(items, 10, seed=20)
        return {
            (w.mutations[0].start_pos[0], w.mutations[0].operator_name)
            for w in items
            if w.job_id in ids
        }

    first = [item(line, op, f"a{line}{op}") for line in range(1, 30) for op in ("x", "y")]
    second = [item(line, op, f"b{line}{op}") for line in range(1, 30) for op in ("x", "y")]
    random.Random(1).shuffle(second)
    assert len(drawn(first)) == 10
    assert drawn(first) == drawn(second)


def test_the_tests_run_fastest_first_as_the_baseline_timed_them(tmp_path: Path) -> None:
    """pytest -x stops at the first failure: a mutant that a fast file kills must not wait for
    the slow files named before it. Entries with a test name count only that test's time."""
    junit = tmp_path / "baseline.xml"
    junit.write_text(
        "<testsuites><testsuite>"
        '<testcase file="tests/slow.py" name="test_a" time="9.0"/>'
        '<testcase file="tests/mixed.py" name="test_fast" time="0.5"/>'
        '<testcase file="tests/mixed.py" name="test_slow[1]" time="20.0"/>'
        '<testcase file="tests/quick.py" name="test_b" time="1.0"/>'
        '<testcase file="tests/quick.py" name="test_c" time="1.5"/>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    tests = (
        "tests/slow.py",
        "tests/mixed.py::test_slow",
        "tests/quick.py",
        "tests/mixed.py::test_fast",
    )
    assert mutation.fastest_first(tests, junit) == (
        "tests/mixed.py::test_fast",
        "tests/quick.py",
        "tests/slow.py",
        "tests/mixed.py::test_slow",
    )
    # no timings: the area's own order
    assert mutation.fastest_first(tests, tmp_path / "missing.xml") == tests


def test_a_rerun_of_survivors_merges_into_the_report_it_read() -> None:
    """--rerun-survivors reads an area's report back, reruns its survivors only, and writes
    the figures of both: the ones killed now move to killed, the rest stay survivors, one the
    rerun did not reach stays as it was."""
    area = mutation.AREAS["cache"]
    diff = "--- a\n+++ b\n-    x = 1\n+    x = 2\n"
    before = mutation.Outcome("cache", total=131, sampled=30, killed=20, not_run=2, seconds=99.0)
    before.survived = [
        ("m.py:3 (core/NumberReplacer)", "x = 1", diff),
        ("m.py:7 (core/AddNot)", "if y:", "-    if y:\n+    if not y:\n"),
        ("m.py:9 (core/AddNot)", "if z:", "-    if z:\n+    if not z:\n"),
        ("m.py:9 (core/AddNot)", "if z:", "-    if z:\n+    if not z:\n"),
    ]
    read = mutation.read_report(mutation.report([before], False, area))
    assert (read.area, read.total, read.sampled, read.killed, read.not_run) == (
        "cache",
        131,
        30,
        20,
        2,
    )
    assert [(w, t) for w, t, _ in read.survived] == [(w, t) for w, t, _ in before.survived]
    assert "+    x = 2" in read.survived[0][2].splitlines()
    rerun = mutation.Outcome("cache", seconds=12.0)
    rerun.survived = [("m.py:9 (core/AddNot)", "if z:", "+    if not z:")]
    # m.py:3 not reached; m.py:7 killed; one of the two m.py:9 killed
    merged = mutation.merge_rerun(
        read, rerun, {"m.py:7 (core/AddNot)": 1, "m.py:9 (core/AddNot)": 2}
    )
    assert merged.killed == 22
    assert [w for w, _, _ in merged.survived] == [
        "m.py:3 (core/NumberReplacer)",
        "m.py:9 (core/AddNot)",
    ]
    assert (merged.sampled, merged.not_run, merged.total) == (30, 2, 131)
    text = mutation.report([merged], False, area)
    assert "| cache | 131 | 28 | 22 | 2 | 0 | 0 | 2 |" in text
    assert "Rerun of the earlier report's 4 survivors" in text
