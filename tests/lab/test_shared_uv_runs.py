"""A lab lock runs uv once per distinct pip request: classes that plan the same pip part (two
GPU classes of one driver that get the same builds, an RTX 3090's and an RTX 4090's) share that run, and get the same pins."""

from __future__ import annotations

from pathlib import Path

from installrepos import gpuenv

LAB = """
[lab]
name = "shared runs"
lockfiles = "locks"

[stack]
requirements = ["jax<0.4.32"]

[[class]]
name = "ada"
os = "linux"
compute_capability = "8.9"
driver = "550.54.14"

[[class]]
name = "ampere"
os = "linux"
compute_capability = "8.6"
driver = "550.54.14"

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


def _uv_runs(stderr: str) -> int:
    return sum(1 for line in stderr.splitlines() if " pip compile " in line)


def _pins(lockfile: Path) -> list[str]:
    return [line for line in lockfile.read_text().splitlines() if "sha256" in line]


def _lock(lab: Path, *classes: str) -> int:
    """Lock these classes (all when none); how many times uv ran."""
    result = gpuenv("-v", "lock", "--lab", str(lab), *(f"--class={c}" for c in classes))
    assert result.returncode == 0, result.stderr
    return _uv_runs(result.stderr)


def test_classes_with_one_pip_request_share_one_uv_run(tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    # one class alone: uv runs (twice here: the local index has no upload times, so the lock
    # with the era's cut-off fails and the one without it is kept)
    ampere, cpu = _lock(lab, "ampere"), _lock(lab, "cpu")
    assert ampere >= 1 and cpu >= 1
    assert _lock(lab, "ada", "ampere") == ampere  # the second class asks nothing new
    assert _lock(lab) == ampere + cpu
    locks = tmp_path / "locks"
    ada, amp = sorted(locks.glob("ada.*")), sorted(locks.glob("ampere.*"))
    assert len(ada) == len(amp) == 1
    assert _pins(ada[0]) == _pins(amp[0]) and _pins(ada[0])
    assert "--class ada" in ada[0].read_text()  # each lockfile its own class's, still
