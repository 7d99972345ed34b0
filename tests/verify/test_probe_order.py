"""Which probes verify runs, and when: the env probe beside the framework probes when the plan
names the frameworks (its interpreter's start-up then costs no time of its own), before them when
its answer decides which frameworks to probe; framework probes never at the same time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

import pytest

import gpuenv.verify as verify_module
from gpuenv.verify import Expectations, ExpectedFramework, verify_environment
from gpuenv.verify.runner import ProbeRun

WAIT_S = 5.0


def _ran(probe: str, facts: Optional[dict[str, Any]], error: Optional[str] = None) -> ProbeRun:
    return ProbeRun(probe, facts, None if error else 0, False, 0.0, None, (), launch_error=error)


class _Probes:
    """Stand-in probes that record what ran at the same time as what."""

    def __init__(
        self,
        env_facts: Optional[dict[str, Any]],
        env_error: Optional[str] = None,
        *,
        meet: bool = True,
    ) -> None:
        self.env_facts, self.env_error = env_facts, env_error
        self.meet = meet  # the env probe lasts until a framework probe has started too
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.overlaps: list[tuple[str, ...]] = []
        self.order: list[str] = []
        self.env_started = threading.Event()
        self.framework_started = threading.Event()

    def __call__(self, python: Path, probe: str, **_kw: Any) -> ProbeRun:
        with self.lock:
            self.order.append(probe)
            if self.running:
                self.overlaps.append(tuple(sorted({*self.running, probe})))
            self.running.add(probe)
        try:
            if probe == "env":  # run one after the other, each waits WAIT_S in vain
                self.env_started.set()
                if self.meet:
                    self.framework_started.wait(WAIT_S)
                return _ran("env", self.env_facts, self.env_error)
            self.framework_started.set()
            if self.meet:
                self.env_started.wait(WAIT_S)
            return _ran(probe, None, "stand-in framework probe")
        finally:
            with self.lock:
                self.running.discard(probe)


@pytest.fixture
def python(tmp_path: Path) -> Path:
    path = tmp_path / "python"
    path.write_text("")  # verify only checks that it exists; the probes are stand-ins
    return path


PLAN = Expectations(
    source="plan",
    python="3.11",
    frameworks={
        "torch": ExpectedFramework(),
        "jax": ExpectedFramework(),
        "mxnet": ExpectedFramework(),
    },
)


def test_with_a_plan_the_env_probe_runs_beside_the_framework_probes(
    python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = _Probes({"python": "3.11.7", "installed": ["torch", "jax"]})
    monkeypatch.setattr(verify_module, "run_probe", probes)
    report = verify_environment(python, PLAN)
    assert ("env", "torch") in probes.overlaps  # started before torch's probe finished
    assert not [o for o in probes.overlaps if "env" not in o]  # frameworks one at a time
    assert sorted(probes.order) == ["env", "jax", "torch"]  # each once
    assert report.python_version == "3.11.7" and report.problems == ()
    assert [f.name for f in report.frameworks] == ["torch", "jax"]
    assert report.notes == ("mxnet: gpuenv has no probe for it; not checked",)


def test_the_env_probe_still_judges_the_interpreter_when_run_beside(
    python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verify_module, "run_probe", _Probes({"python": "3.9.1"}))
    assert verify_environment(python, PLAN).problems == (
        "the environment runs Python 3.9.1, the plan chose 3.11",
    )
    monkeypatch.setattr(verify_module, "run_probe", _Probes(None, "exec format error"))
    (problem,) = verify_environment(python, PLAN).problems
    assert problem == f"{python} did not run a Python script: exec format error"


def test_without_a_plan_the_env_probe_decides_first(
    python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = _Probes({"python": "3.11.7", "installed": ["jax", "numpy"]}, meet=False)
    monkeypatch.setattr(verify_module, "run_probe", probes)
    report = verify_environment(python)
    assert probes.order == ["env", "jax"] and probes.overlaps == []
    assert [f.name for f in report.frameworks] == ["jax"]


def test_a_failing_env_probe_thread_is_raised_not_lost(
    python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_probe(_python: Path, probe: str, **_kw: Any) -> ProbeRun:
        if probe == "env":
            raise MemoryError("no memory for a thread's probe")
        return _ran(probe, None, "stand-in")

    monkeypatch.setattr(verify_module, "run_probe", run_probe)
    with pytest.raises(MemoryError, match="thread's probe"):
        verify_environment(python, PLAN)
