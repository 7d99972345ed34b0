"""Deep nesting and numbers JSON has no word for, in the files a user is handed (issue 20): a
lab file, a pylock.toml and a `--plan` file each get one message and exit 2, never a
RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuenv.lab.load import LabError, load_lab
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.load import load_locked
from lockdata import in_process

DEEP = 50_000  # far past the interpreter's recursion limit


def test_a_deeply_nested_lab_file_is_one_message(tmp_path: Path, kb) -> None:  # type: ignore[no-untyped-def]
    lab = tmp_path / "lab.toml"
    lab.write_text("x = " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    with pytest.raises(LabError, match="nested too deeply"):
        load_lab(lab, kb)
    code, _, err = in_process("lock", "--lab", str(lab), "--check")
    assert code == 2 and "nested too deeply" in err and "Traceback" not in err


def test_a_deeply_nested_pylock_is_one_message(tmp_path: Path) -> None:
    path = tmp_path / "pylock.toml"
    path.write_text('lock-version = "1.0"\nx = ' + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    with pytest.raises(LockfileError, match="nested too deeply"):
        load_locked(path)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * DEEP + "]" * DEEP, "nested too deeply"),
        ('{"schema": 1, "python": NaN}', "NaN is not JSON"),
        ('{"schema": ' + "9" * 5000 + "}", "a number with 5000 digits"),
    ],
    ids=["deep", "nan", "5000 digits"],
)
def test_a_hostile_plan_file_is_one_message(text: str, why: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(text, encoding="utf-8")
    code, _, err = in_process("lock", "--plan", str(plan), "-o", str(tmp_path / "x.conda-lock.yml"))
    assert code == 2, err
    assert why in err and "Traceback" not in err
