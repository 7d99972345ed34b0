"""The output writer's second look: something planted at the target while the content was being
written (another process, an attacker racing the write) is refused, not replaced.

The race is made deterministic by planting from inside the `write` callback, which runs after
the first check and before the rename.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuenv.fs import atomic_write as aw


def _planting(plant: Callable[[], None]) -> Callable[[Path], None]:
    def write(staged: Path) -> None:
        staged.write_text("new content\n", encoding="utf-8")
        plant()

    return write


def test_a_link_planted_during_the_write_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "out.lock.yml"
    canary = tmp_path / "canary.txt"
    canary.write_text("the user's file\n")
    with pytest.raises(aw.OutputPathError, match="symbolic link"):
        aw.atomic_write(target, _planting(lambda: target.symlink_to(canary)))
    assert target.is_symlink() and os.readlink(target) == str(canary)
    assert canary.read_text() == "the user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canary.txt", "out.lock.yml"]


def test_a_folder_planted_during_the_write_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "out.lock.yml"

    def plant() -> None:
        target.mkdir()
        (target / "kept.txt").write_text("x")

    with pytest.raises(aw.OutputPathError, match="a folder"):
        aw.atomic_write(target, _planting(plant))
    assert (target / "kept.txt").read_text() == "x"


def test_a_regular_file_written_meanwhile_is_replaced(tmp_path: Path) -> None:
    # the second look refuses only what is not a regular file: a plain rewrite still lands
    target = tmp_path / "out.lock.yml"
    aw.atomic_write(target, _planting(lambda: target.write_text("someone else's\n")))
    assert target.read_text() == "new content\n" and not target.is_symlink()
