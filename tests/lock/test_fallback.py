"""Never silently worse (issue 18): when the planned GPU build cannot be locked, `gpuenv lock`,
`gpuenv lock --lab` and `gpuenv setup` fail (exit 5) naming the index and the build, unless the
user or the lab class accepts the CPU build; a fallback that keeps the GPU is allowed and
printed; `lock --lab --check` fails on a lockfile whose accelerator is not its plan's.

The framework indexes the knowledge base names are made unreachable here (their look-ups
raise), and the user's index is a local one with a CPU torch and an older CUDA 11.8 torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

import gpuenv.lock.availability as availability
from gpuenv.index.config import IndexConfig
from gpuenv.lock.availability import framework_packages, one_line_per_host, resolve_with_sources
from gpuenv.lock.fallback import FallbackRefusedError
from gpuenv.resolve import resolve
from isolation import only_index
from localrepos import build_simple_index, build_wheel
from lockdata import dump, in_process, load, plan_of, set_plan

LAPTOP = ["--os", "windows", "--gpu", "GeForce 940M", "--driver", "457.49"]
LAB = """
[stack]
requirements = ["torch"]

[[class]]
name = "laptop"
os = "windows"
gpu = "GeForce 940M"
driver = "457.49"
{extra}
"""


@pytest.fixture(scope="module")
def cpu_index(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The user's index: CPU torch wheels only (no CUDA build), for any Python on Windows."""
    root = tmp_path_factory.mktemp("cpu-index")
    torch = build_wheel(root / "wheels", "torch", "2.15.0", tag="py3-none-win_amd64")
    return build_simple_index(root / "index", [torch])


@pytest.fixture(autouse=True)
def framework_indexes_unreachable(
    monkeypatch: pytest.MonkeyPatch, kb: Any, tmp_path: Path
) -> set[str]:
    """Every framework index of the knowledge base refuses the connection; the user's index
    answers. A private gpuenv cache: no look-up is remembered between tests."""
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "gpuenv-cache"))
    framework = set().union(*framework_packages(kb, ["torch"], "win-64").values())
    real = availability._fetch

    def fetch(index: str, project: str) -> list[str]:
        if index in framework:
            raise requests.ConnectionError("test: connection refused")
        return real(index, project)

    monkeypatch.setattr(availability, "_fetch", fetch)
    return framework


def ideal_label(kb: Any, describe: Any) -> str:
    """The build resolve chooses for the laptop (every source reachable)."""
    plan = resolve(describe("GeForce 940M", "457.49", os_name="windows"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    assert torch.gpu  # the laptop's plan is a GPU plan: what the lock must not lose silently
    return f"torch {torch.version} [{torch.variant}]"


@dataclass(frozen=True)
class Ran:
    exit_code: int
    output: str  # stdout, then stderr


@pytest.fixture
def gpuenv() -> Callable[..., Ran]:
    """gpuenv's own entry point (its exit statuses), in this process (the patched sources)."""

    def run(*args: str) -> Ran:
        code, out, err = in_process(*args)  # the shared runner: exit status, stdout, stderr
        return Ran(code, out + err)

    return run


def test_a_lock_that_would_lose_the_gpu_fails_with_exit_5(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    cpu_index: str,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    only_index(monkeypatch, cpu_index)
    out = tmp_path / "x.conda-lock.yml"
    result = gpuenv("lock", "torch", *LAPTOP, "-o", str(out))
    assert result.exit_code == 5, result.output
    planned = ideal_label(kb, describe)
    assert f"{planned} (the planned build) cannot be locked" in result.output
    assert "is unreachable" in result.output  # the index, named
    assert "--allow-cpu-fallback" in result.output and "mirror" in result.output
    assert not out.exists()


def test_allow_cpu_fallback_locks_the_cpu_build_and_names_the_build_lost(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    cpu_index: str,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    only_index(monkeypatch, cpu_index)
    out = tmp_path / "x.conda-lock.yml"
    result = gpuenv(
        "lock", "torch", *LAPTOP, "-o", str(out), "--allow-cpu-fallback", "--python", "3.12"
    )
    assert result.exit_code == 0, result.output
    planned = ideal_label(kb, describe)
    lines = [line for line in result.output.splitlines() if "will run on the CPU" in line]
    # one warning, naming the build resolve chose, not the newest build it rejected anyway
    assert len(lines) == 1 and planned in lines[0], lines
    assert "[cu132]" not in lines[0]
    assert "torch 2.15.0 [cpu]" in result.output and out.exists()
    # the framework host that did not answer: one line, not one per CUDA index it serves
    notes = [line for line in result.output.splitlines() if "unreachable (" in line]
    assert len(notes) == 1 and "indexes" in notes[0], notes


def test_a_fallback_that_keeps_the_gpu_is_allowed_and_printed(
    monkeypatch: pytest.MonkeyPatch, kb: Any, describe: Any, tmp_path: Path
) -> None:
    """A mirror with an older CUDA 11.8 torch only: the lock keeps the GPU, and says so."""
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    wheel = build_wheel(tmp_path / "w", "torch", "2.6.0+cu118", tag="py3-none-win_amd64")
    mirror = build_simple_index(tmp_path / "mirror", [wheel])
    sourced = resolve_with_sources(
        machine, ["torch"], kb, IndexConfig(index_url=mirror, origin="test")
    )
    got = sourced.plan.frameworks["torch"]
    assert got.gpu and (got.version, got.variant) == ("2.6.0", "cu118")
    planned = ideal_label(kb, describe)
    assert any(
        line.startswith(f"{planned} (the planned build) cannot be locked")
        and "torch 2.6.0 [cu118], which runs on this GPU too" in line
        for line in sourced.fallback
    ), sourced.fallback


def test_the_policy_none_refuses_a_gpu_keeping_fallback(
    kb: Any, describe: Any, tmp_path: Path
) -> None:
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    wheel = build_wheel(tmp_path / "w", "torch", "2.6.0+cu118", tag="py3-none-win_amd64")
    mirror = IndexConfig(index_url=build_simple_index(tmp_path / "m", [wheel]), origin="test")
    resolve_with_sources(machine, ["torch"], kb, mirror, fallback="gpu")
    with pytest.raises(FallbackRefusedError, match=r"torch 2\.6\.0 \[cu118\]"):
        resolve_with_sources(machine, ["torch"], kb, mirror, fallback="none")


def _lab(tmp_path: Path, extra: str = "") -> Path:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(extra=extra))
    return lab


def test_a_lab_lock_that_would_lose_the_gpu_fails_and_check_says_why(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    cpu_index: str,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    only_index(monkeypatch, cpu_index)
    lab = _lab(tmp_path)
    lockfile = tmp_path / "lockfiles" / "laptop.conda-lock.yml"
    result = gpuenv("lock", "--lab", str(lab))
    assert result.exit_code == 5, result.output
    assert f"FAILED laptop: {ideal_label(kb, describe)} (the planned build)" in result.output
    assert not lockfile.exists()
    # accepted on the command line: locked, and the fallback printed
    result = gpuenv("lock", "--lab", str(lab), "--allow-cpu-fallback")
    assert result.exit_code == 0, result.output
    assert "warning: laptop: fallback:" in result.output and lockfile.exists()
    # the class does not accept the CPU: --check fails on that lockfile, saying why
    result = gpuenv("lock", "--lab", str(lab), "--check")
    assert result.exit_code == 1, result.output
    assert "runs on cpu, its plan on cuda" in result.output
    assert gpuenv("lock", "--lab", str(lab), "--check", "--allow-cpu-fallback").exit_code == 0


def test_a_lab_class_can_accept_the_cpu_build(
    gpuenv: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, cpu_index: str, tmp_path: Path
) -> None:
    only_index(monkeypatch, cpu_index)
    lab = _lab(tmp_path, 'fallback = "cpu"')
    result = gpuenv("lock", "--lab", str(lab))
    assert result.exit_code == 0, result.output
    assert "torch 2.15.0 [cpu]" in result.output
    assert gpuenv("lock", "--lab", str(lab), "--check").exit_code == 0
    # the class changes its mind: the same lockfile is now refused by --check
    lab.write_text(LAB.format(extra='fallback = "gpu"'))
    result = gpuenv("lock", "--lab", str(lab), "--check")
    assert result.exit_code == 1 and "runs on cpu" in result.output


def test_require_gpu_and_no_probe_work_with_lab(
    gpuenv: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, cpu_index: str, tmp_path: Path
) -> None:
    only_index(monkeypatch, cpu_index)
    lab = _lab(tmp_path, 'fallback = "cpu"')
    result = gpuenv("lock", "--lab", str(lab), "--require-gpu")
    assert "cannot be given" not in result.output
    assert result.exit_code != 0  # the class accepts the CPU, --require-gpu does not
    result = gpuenv("lock", "--lab", str(lab), "--no-probe", "--check")
    assert "cannot be given" not in result.output and result.exit_code == 1  # missing


def test_setup_refuses_the_cpu_fallback_too(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    cpu_index: str,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    """setup plans through the same sources: the same refusal, before anything is installed."""
    import gpuenv.detect as detect

    only_index(monkeypatch, cpu_index)
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    monkeypatch.setattr(detect, "detect_machine", lambda: machine)
    result = gpuenv("setup", "torch", "--dry-run")
    assert result.exit_code == 5, result.output
    assert f"{ideal_label(kb, describe)} (the planned build) cannot be locked" in result.output
    result = gpuenv("setup", "torch", "--dry-run", "--allow-cpu-fallback")
    assert "cannot be locked" in result.output and "torch 2.15.0 [cpu]" in result.output


def test_unreachable_notes_are_one_line_per_host_and_cause() -> None:
    notes = [
        "https://a.example/whl/cu118: unreachable (ConnectionError: refused)",
        "https://b.example/simple/: unreachable (ConnectionError: refused)",
        "https://a.example/whl/cu126: unreachable (ConnectionError: refused)",
        "https://a.example/whl/cu130: unreachable (HTTPError: 503)",
        "uv configuration: UV_INDEX: not a URL",
    ]
    assert one_line_per_host(notes) == [
        "https://a.example: unreachable (ConnectionError: refused), for its 2 indexes"
        " /whl/cu118, /whl/cu126",
        "https://b.example/simple/: unreachable (ConnectionError: refused)",
        "https://a.example/whl/cu130: unreachable (HTTPError: 503)",
        "uv configuration: UV_INDEX: not a URL",
    ]


def test_setup_prints_a_fallback_that_keeps_the_gpu(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    import gpuenv.detect as detect

    wheel = build_wheel(tmp_path / "w", "torch", "2.6.0+cu118", tag="py3-none-win_amd64")
    only_index(monkeypatch, build_simple_index(tmp_path / "mirror", [wheel]))
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    monkeypatch.setattr(detect, "detect_machine", lambda: machine)
    result = gpuenv("setup", "torch", "--dry-run")
    assert result.exit_code == 0, result.output
    planned = ideal_label(kb, describe)
    assert f"fallback: {planned} (the planned build) cannot be locked" in result.output
    assert "torch 2.6.0 [cu118], which runs on this GPU too" in result.output


def test_a_mirror_given_with_index_gives_the_planned_gpu_build(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    cpu_index: str,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    """The way out the refusal names: a mirror of the framework index, on the command line."""
    only_index(monkeypatch, cpu_index)
    plan = resolve(describe("GeForce 940M", "457.49", os_name="windows"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    wheel = build_wheel(
        tmp_path / "w", "torch", f"{torch.version}+{torch.variant}", tag="py3-none-win_amd64"
    )
    mirror = build_simple_index(tmp_path / "mirror", [wheel])
    out = tmp_path / "x.conda-lock.yml"
    args = ["torch", *LAPTOP, "--python", "3.12", "-o", str(out), "--local-paths"]
    result = gpuenv("lock", *args, "--index", mirror)
    assert result.exit_code == 0, result.output
    assert f"locked {ideal_label(kb, describe)}" in result.output and "(cuda)" in result.output
    assert gpuenv("lock", *args, "--index", "ftp://mirror.example/simple").exit_code == 2


# -- issue 28: the Python a lock changes is a fallback too ------------------------------------


@pytest.fixture
def old_python_mirror(tmp_path: Path, kb: Any, describe: Any) -> str:
    """A mirror with the planned torch build, but only for Python 3.10: the lock can keep the
    build only by changing the plan's Python."""
    plan = resolve(describe("GeForce 940M", "457.49", os_name="windows"), ["torch"], kb=kb)
    assert plan.python != "3.10"  # the plan's own Python is newer: the change is real
    torch = plan.frameworks["torch"]
    wheel = build_wheel(
        tmp_path / "w", "torch", f"{torch.version}+{torch.variant}", tag="cp310-cp310-win_amd64"
    )
    return build_simple_index(tmp_path / "old-python", [wheel])


def test_a_lock_that_changes_the_python_says_so(
    old_python_mirror: str, kb: Any, describe: Any
) -> None:
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    config = IndexConfig(index_url=old_python_mirror, origin="test")
    sourced = resolve_with_sources(machine, ["torch"], kb, config)
    ideal = sourced.ideal
    assert sourced.plan.python == "3.10" and sourced.plan.frameworks == ideal.frameworks
    assert sourced.fallback == (
        f"Python {ideal.python} (planned) cannot be locked; locking Python 3.10",
    )


def test_the_policy_none_refuses_a_lock_that_changes_only_the_python(
    old_python_mirror: str, kb: Any, describe: Any
) -> None:
    machine = describe("GeForce 940M", "457.49", os_name="windows")
    config = IndexConfig(index_url=old_python_mirror, origin="test")
    with pytest.raises(FallbackRefusedError, match=r"locking Python 3\.10"):
        resolve_with_sources(machine, ["torch"], kb, config, fallback="none")


def test_a_lab_class_with_fallback_none_refuses_the_python_change_and_check_says_why(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    old_python_mirror: str,
    tmp_path: Path,
) -> None:
    only_index(monkeypatch, old_python_mirror)
    lab = _lab(tmp_path, 'fallback = "none"')
    lockfile = tmp_path / "lockfiles" / "laptop.conda-lock.yml"
    result = gpuenv("lock", "--lab", str(lab))
    assert result.exit_code == 5, result.output
    assert "locking Python 3.10" in result.output and not lockfile.exists()
    # the class allows fallbacks: locked, the Python change printed
    lab.write_text(LAB.format(extra='fallback = "gpu"'))
    result = gpuenv("lock", "--lab", str(lab))
    assert result.exit_code == 0, result.output
    assert "locking Python 3.10" in result.output and lockfile.exists()
    assert gpuenv("lock", "--lab", str(lab), "--check").exit_code == 0
    # the class changes its mind: that lockfile holds a fallback it no longer accepts
    lab.write_text(LAB.format(extra='fallback = "none"'))
    result = gpuenv("lock", "--lab", str(lab), "--check")
    assert result.exit_code == 1, result.output
    assert 'it holds a fallback (Python 3.10), and fallback = "none"' in result.output


def test_check_refuses_the_planned_cuda_build_set_to_run_on_the_cpu(
    gpuenv: Callable[..., Ran],
    monkeypatch: pytest.MonkeyPatch,
    kb: Any,
    describe: Any,
    tmp_path: Path,
) -> None:
    """The lockfile holds the very build its plan chose (torch [cu118]), but says it runs on
    the CPU: no framework differs from the plan, so only the accelerator tells."""
    plan = resolve(describe("GeForce 940M", "457.49", os_name="windows"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    wheel = build_wheel(
        tmp_path / "w", "torch", f"{torch.version}+{torch.variant}", tag="py3-none-win_amd64"
    )
    only_index(monkeypatch, build_simple_index(tmp_path / "mirror", [wheel]))
    lab = _lab(tmp_path)
    lockfile = tmp_path / "lockfiles" / "laptop.conda-lock.yml"
    assert gpuenv("lock", "--lab", str(lab)).exit_code == 0
    assert gpuenv("lock", "--lab", str(lab), "--check").exit_code == 0
    data = load(lockfile)
    locked = plan_of(data)
    assert locked["accelerator"] == "cuda" and locked["frameworks"]["torch"]["gpu"] is True
    locked["accelerator"] = "cpu"
    locked["frameworks"]["torch"]["gpu"] = False
    set_plan(data, locked)
    dump(data, lockfile)
    result = gpuenv("lock", "--lab", str(lab), "--check")
    assert result.exit_code == 1, result.output
    assert "runs on cpu, its plan on cuda" in result.output
    # a class that accepts the CPU accepts it
    lab.write_text(LAB.format(extra='fallback = "cpu"'))
    assert gpuenv("lock", "--lab", str(lab), "--check").exit_code == 0


def test_a_build_that_lost_to_another_frameworks_fallback_says_so(kb, describe) -> None:  # type: ignore[no-untyped-def]
    """The cause is named as it was observed: torch's planned build is unavailable (rejected
    as such), and TensorFlow's planned build is not what agrees with the torch that is left.
    TensorFlow was never "unpublished" (issue 32)."""
    import dataclasses

    from gpuenv.lock.fallback import fallbacks
    from gpuenv.resolve import resolve
    from gpuenv.resolve.plan import RejectedCandidate

    machine = describe("GeForce GTX 1080 Ti", "535.183.01", "linux")
    ideal = resolve(machine, ["torch", "tensorflow"], kb=kb, python="3.12")
    older = resolve(machine, ["torch==2.6.0", "tensorflow"], kb=kb, python="3.12")
    torch_planned = (
        f"torch {ideal.frameworks['torch'].version} [{ideal.frameworks['torch'].variant}]"
    )
    got = dataclasses.replace(
        older,
        rejected=(RejectedCandidate(torch_planned, "unavailable", "no reachable source has it"),),
    )
    why = {f.framework: f.why for f in fallbacks(ideal, got)}
    assert why["torch"] == "no reachable source has it"
    assert "no reachable source" not in why["tensorflow"]
    assert f"torch {older.frameworks['torch'].version}" in why["tensorflow"]
