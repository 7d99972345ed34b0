"""Which lab file setup uses: --lab always; one found in the folder only when no requirements
are given, so an unrelated or broken ./lab.toml never blocks `gpuenv setup jax`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.lab.load import LabError, discover_lab
from gpuenv.recipes import KnowledgeBase

GOOD_LAB = (
    '[stack]\nrequirements = ["jax<0.4.32"]\n[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'
)
UNRELATED = "[tool.black]\nline-length = 100\n"  # some other tool's lab.toml
BROKEN = "[stack\nrequirements = \n"


def setup(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "setup", "--dry-run", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=300,
    )


@pytest.mark.parametrize("text", [UNRELATED, BROKEN, GOOD_LAB])
def test_requirements_on_the_command_line_win(text: str, tmp_path: Path) -> None:
    (tmp_path / "lab.toml").write_text(text)
    result = setup("jax<0.4.32", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: lab.toml in this folder was not used" in result.stderr
    assert "lab class" not in result.stderr and "jax 0.4.31" in result.stderr


@pytest.mark.parametrize(
    ("text", "expected"), [(UNRELATED, "unknown key 'tool'"), (BROKEN, "not valid TOML")]
)
def test_without_requirements_a_bad_lab_file_is_named_with_a_way_out(
    text: str, expected: str, tmp_path: Path
) -> None:
    (tmp_path / "gpuenv.toml").write_text(text)
    result = setup(cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr and "found as ./gpuenv.toml" in result.stderr
    assert "gpuenv setup torch" in result.stderr and "Traceback" not in result.stderr


def test_without_requirements_the_folders_lab_is_used(tmp_path: Path) -> None:
    (tmp_path / "lab.toml").write_text(GOOD_LAB)
    result = setup(cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "lab class cpu (from lab.toml)" in result.stderr


def test_an_explicit_lab_is_always_read(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(UNRELATED)
    with pytest.raises(LabError, match="unknown key 'tool'"):
        discover_lab(tmp_path, path, ("jax",), kb)
    path.write_text(GOOD_LAB)
    lab, note = discover_lab(tmp_path, path, ("jax",), kb)
    assert lab is not None and note is None


def test_no_lab_file_no_note(tmp_path: Path, kb: KnowledgeBase) -> None:
    assert discover_lab(tmp_path, None, (), kb) == (None, None)
    (tmp_path / "lab.toml").mkdir()  # a folder of that name is not a lab file
    assert discover_lab(tmp_path, None, (), kb) == (None, None)
