"""`lock --lab --check` reports the cause that changed (issue 18), not a fallback the lockfile
held before the edit: the committed example lockfiles hold fallbacks (locked without the
PyTorch index), so editing a class's driver is the test."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from gpuenv.lock.load import load_locked
from gpuenv.lock.staleness import planned_at_lock

REPO = Path(__file__).resolve().parents[2]
CLASS = "ampere-workstation"


def _copy_lab(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the lockfiles must stay inside the lab's repository
    lab = tmp_path / "lab" / "lab.toml"
    lab.parent.mkdir()
    text = (REPO / "examples" / "vision-lab" / "lab.toml").read_text(encoding="utf-8")
    lab.write_text(text.replace('"../../lockfiles"', '"../lockfiles"'), encoding="utf-8")
    shutil.copytree(REPO / "lockfiles", tmp_path / "lockfiles")
    return lab


def test_the_plan_before_the_fallback_is_read_back_from_the_record() -> None:
    locked = load_locked(REPO / "lockfiles" / f"{CLASS}.conda-lock.yml")
    assert locked.fallback  # the example holds a fallback: otherwise this test tests nothing
    _python, planned = planned_at_lock(locked)
    for part in locked.fallback.split("; "):
        found = re.fullmatch(r"(\S+) (\S+ \[[^\]]+\]) -> (\S+ \[[^\]]+\])", part)
        if found:
            assert planned[found[1]] == found[2]  # the build planned, not the one locked


def test_an_edited_driver_is_reported_as_the_driver(gpuenv_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lab = _copy_lab(tmp_path)
    text = lab.read_text(encoding="utf-8")
    assert 'driver = "550.54.14"' in text
    lab.write_text(text.replace('driver = "550.54.14"', 'driver = "560.35.03"'), encoding="utf-8")
    done: subprocess.CompletedProcess[str] = gpuenv_cli(
        "lock", "--lab", str(lab), "--check", "--class", CLASS
    )
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("STALE"))
    assert "is stale: driver 550.54.14 -> 560.35.03" in line, line
    # the fallback the file held all along is not presented as what changed
    fallback = load_locked(tmp_path / "lockfiles" / f"{CLASS}.conda-lock.yml").fallback
    for part in fallback.split("; "):
        name, locked_build = part.split(" ")[0], part.split(" -> ")[-1]
        assert f"{name} {locked_build} ->" not in line, line


def test_jupyter_in_the_stack_is_reported_as_the_package_it_adds(
    gpuenv_cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """`jupyter = true` adds ipykernel to every class's lock: that is the cause --check names,
    not "its lock options changed", a knowledge base that plans the same stack, or the
    fallback the file held all along."""
    lab = _copy_lab(tmp_path)
    text = lab.read_text(encoding="utf-8")
    lab.write_text(text.replace("[stack]\n", "[stack]\njupyter = true\n", 1), encoding="utf-8")
    done: subprocess.CompletedProcess[str] = gpuenv_cli(
        "lock", "--lab", str(lab), "--check", "--class", CLASS, "--class", "cpu-only"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    stale = [x for x in done.stdout.splitlines() if x.startswith("STALE")]
    assert len(stale) == 2, done.stdout
    for line in stale:
        assert line.endswith("is stale: packages +ipykernel"), line
