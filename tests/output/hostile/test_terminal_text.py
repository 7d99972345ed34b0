"""Text from the store and from lockfiles is printed so that it cannot act on a terminal (issue
20): an escape sequence in an environment's metadata shows as \\x1b, and a store entry whose
name holds a newline stays on its own line in `gpuenv envs`."""

from __future__ import annotations

import os

from gpuenv.output import shown
from installrepos import gpuenv
from storehelpers import fake_env, fake_metadata, store

CLEAR = "\x1b[2J\x1b]0;owned\x07"


def test_shown_escapes_control_characters_and_keeps_the_rest() -> None:
    assert shown("torch 2.7.1 [cu118] \u2265 ok") == "torch 2.7.1 [cu118] \u2265 ok"  # text stays
    assert shown("a\nb\x1b[2J\x9b") == "a\\x0ab\\x1b[2J\\x9b"


def test_gpuenv_envs_prints_no_control_character_from_the_store() -> None:
    fake_env("lab", metadata={**fake_metadata("lab"), "stack": {"torch": f"2.7.1{CLEAR}"}})
    os.mkdir(store() / "x\ny")  # a broken entry whose name holds a newline
    done = gpuenv("envs")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "2.7.1\\x1b[2J" in done.stdout
    broken = [line for line in done.stdout.splitlines() if "BROKEN" in line]
    assert len(broken) == 1 and broken[0].startswith("x\\x0ay")
