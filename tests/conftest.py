from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.machine import Machine
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase, load_knowledge_base

REPO = Path(__file__).resolve().parent.parent
# --import-mode=importlib leaves tests/ off sys.path; the shared test helpers live in
# tests/support.
if str(REPO / "tests" / "support") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "support"))
# Text for people wraps to the terminal's width, 80 columns off a terminal; the tests of what a
# message says read it on one line (GPUENV_COLUMNS=0: no wrapping). Those of how it is laid
# out (tests/output/test_wrap.py, tests/envs/test_envs_table.py) set their own width.
os.environ["GPUENV_COLUMNS"] = "0"


@pytest.fixture(autouse=True)
def _hosts_given_up_are_per_run() -> None:
    """A host gpuenv gave up on is not tried again in the same run (gpuenv.index.retry): one
    test's dead host must not be given up on in the next test's run, in this process."""
    from gpuenv.index import retry

    retry._given_up.clear()


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return load_knowledge_base()


@pytest.fixture(scope="session")
def describe(kb: KnowledgeBase):  # type: ignore[no-untyped-def]
    def make(
        gpu: str | None = None,
        driver: str | None = None,
        os_name: str = "linux",
        arch: str | None = None,
    ) -> Machine:
        return describe_machine(kb, gpu=gpu, driver=driver, os_name=os_name, arch=arch)

    return make


def run_gpuenv(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """gpuenv as a user runs it: a separate process, its exit status and both streams."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        cwd=REPO,
    )


@pytest.fixture(scope="session")
def gpuenv_cli():  # type: ignore[no-untyped-def]
    return run_gpuenv


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The threat-model suite lives beside the package each part attacks (tests/<package>/
    hostile/), and stays one suite: `pytest -m hostile` runs it all."""
    for item in items:
        if "hostile" in Path(str(item.fspath)).parent.parts[-1:]:
            item.add_marker(pytest.mark.hostile)
