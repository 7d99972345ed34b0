"""The docs cannot drift: every run README.md and docs/ show (`$ gpuenv ...` and its output)
is run here and its shown lines compared with what gpuenv prints, unless the page marks it
`<!-- illustrative: why -->` (a run on one particular machine: a setup, an install). Every
command line they show names a real command and real options, and the lab guide's schema
table lists every key the schema takes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from docs_shown import PAGES, REPO, ShownRun, all_runs, missing_lines
from gpuenv.cli import cli
from gpuenv.lab import schema

RUNS = all_runs()


def _checkable(run: ShownRun) -> bool:
    """Runs whose output depends on nothing but gpuenv and its knowledge base: a described
    machine (--gpu), the FAQ, a lab's offline --check."""
    argv = run.argv()
    return (
        (argv[0] in ("resolve", "explain") and "--gpu" in argv)
        or argv[:2] == ["doctor", "--faq"]
        or (argv[0] == "lock" and "--lab" in argv and "--check" in argv)
    )


def _printed(run: ShownRun) -> str:
    env = {**os.environ, "GPUENV_COLUMNS": "0"}  # the docs show lines whole
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", *run.argv()],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    return (done.stdout + done.stderr).replace(f"{REPO}/", "")


def test_the_docs_show_runs() -> None:
    assert len(RUNS) >= 15 and sum(map(_checkable, RUNS)) >= 10


@pytest.mark.parametrize("run", RUNS, ids=[r.where for r in RUNS])
def test_a_shown_run_prints_what_the_docs_show(run: ShownRun) -> None:
    if run.illustrative:
        assert not _checkable(run), f"{run.where}: checkable here; compare it, drop the mark"
        return
    assert _checkable(run), (
        f"{run.where}: `{run.command}` cannot be checked here; mark the block"
        " <!-- illustrative: why --> or show a run on a described machine"
    )
    assert missing_lines(run.output, _printed(run)) == [], run.where


def test_the_comparison_finds_a_line_that_drifted() -> None:
    printed = "Python       3.14\ntorch        2.14.1 [cu126] (CUDA 12.6)\n"
    assert missing_lines(("...", "torch        2.10.0 [cu126] (CUDA 12.6)"), printed) == [
        "torch        2.10.0 [cu126] (CUDA 12.6)"
    ]
    assert missing_lines(("torch 2.14.1 ... (CUDA 12.6)", "Python 3.14"), printed) == [
        "Python 3.14"
    ]


# ---- command lines: a real command and real options -------------------------------------------

_COMMAND = re.compile(
    r"^\s+(?:\$ )?(gpuenv (?![\w-]+:).*)$"
)  # not an output line `gpuenv setup: ...`


def shown_command_lines() -> list[tuple[str, str]]:
    """(where, segment) for each `gpuenv ...` in an indented line of the pages; `a / b` and
    `a && b` are two."""
    out = []
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            found = _COMMAND.match(line)
            if not found:
                continue
            text = found.group(1).split("  #")[0]
            for segment in re.split(r"\s+(?:/|&&|\|)\s+", text):
                if segment.startswith("gpuenv "):
                    out.append((f"{page.relative_to(REPO)}:{n}", segment))
    return out


def unknown_options(segment: str) -> list[str]:
    words = [w.strip("[]") for w in shlex.split(segment.replace("...", ""), comments=True)][1:]
    words = [w for w in words if w not in ("-v", "-q")] or ["--help"]
    command: click.Command = cli
    ctx = click.Context(cli)
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        sub = command.get_command(ctx, words[0])
        if sub is None:
            return [f"no command {words[0]!r}"]
        command, words = sub, words[1:]
    known = {opt for p in command.params for opt in getattr(p, "opts", ())}
    known |= {"--help", "-h", "-v", "-q", "--verbose", "--quiet"}
    flags = [w.split("=")[0] for w in words if w.startswith("-") and w != "--"]
    if "--" in words:  # `gpuenv run -- CMD`: what follows is the command's own
        flags = [f for f in flags if words.index(f) < words.index("--")] if flags else []
    return [f for f in flags if f not in known and not re.fullmatch(r"-\d.*", f)]


def test_every_shown_command_names_real_options() -> None:
    lines = shown_command_lines()
    assert len(lines) > 40
    wrong = {f"{where}: {seg}": bad for where, seg in lines if (bad := unknown_options(seg))}
    assert wrong == {}


def test_the_option_check_sees_a_renamed_flag() -> None:
    assert unknown_options("gpuenv lock torch --lab x.toml --chek") == ["--chek"]
    assert unknown_options("gpuenv envs rollback jax") == []
    assert unknown_options("gpuenv nosuch") == ["no command 'nosuch'"]


def test_the_lab_guide_lists_every_key_of_the_schema() -> None:
    text = (REPO / "docs" / "lab-guide.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (?:`\[+\w+\]+`)? *\| `(\w+)` \|", text, re.M))
    keys = {*schema.LAB_KEYS, *schema.STACK_KEYS, *schema.CLASS_KEYS}
    assert keys - listed == set()


def test_pages_exist() -> None:
    assert all(isinstance(p, Path) and p.is_file() for p in PAGES)
