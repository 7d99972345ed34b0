"""The group's -q and -v work after every subcommand too (issue 21: `gpuenv verify -q` was
refused while `setup -q` worked), unless the command gives the letter its own meaning."""

from __future__ import annotations

import click
import pytest

from gpuenv import output
from gpuenv.cli import COMMANDS, cli
from lockdata import in_process


def leaf_commands() -> list[tuple[str, ...]]:
    ctx = click.Context(cli)
    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, (*path, name))
        else:
            found.append(path)

    walk(cli, ())
    return found


LEAVES = leaf_commands()


def test_the_walk_reaches_every_command() -> None:
    assert {path[0] for path in LEAVES} == set(COMMANDS)
    assert ("recipes", "check") in LEAVES


@pytest.mark.parametrize("path", LEAVES, ids=[" ".join(p) for p in LEAVES])
def test_every_command_takes_q_and_v(path: tuple[str, ...]) -> None:
    for flag in ("-q", "-v"):
        code, out, err = in_process(*path, flag, "--help")
        assert code == 0, err
        assert flag in out


@pytest.mark.parametrize(("flag", "level"), [("-q", output.QUIET), ("-v", output.VERBOSE)])
def test_after_the_command_as_before_it(flag: str, level: int) -> None:
    for args in ((flag, "recipes", "check"), ("recipes", "check", flag)):
        output.set_verbosity(output.NORMAL)
        code, _, err = in_process(*args)
        assert code == 0, err
        assert output._level == level, args  # what every printer of gpuenv.output consults


def test_every_command_says_what_it_does() -> None:
    """`gpuenv recipes --help` listed `check` with no words (issue 21): every command has help."""
    ctx = click.Context(cli)

    def walk(command: click.Command, path: str) -> list[str]:
        silent = [] if (command.help or "").strip() else [path]
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                silent += walk(sub, f"{path} {name}")
        return silent

    assert walk(cli, "gpuenv") == []


def test_the_readme_names_every_command_without_json() -> None:
    """The README says which commands lack --json (issue 21: it said every command had it)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    without = []
    for path in LEAVES:
        code, out, err = in_process(*path, "--help")
        assert code == 0, err
        if "--json" not in out:
            without.append(" ".join(path))
    assert without, "some commands have no --json (run, activate)"
    line = next(ln for ln in readme.splitlines() if "`--json` on every command but" in ln)
    assert sorted(without) == sorted(
        part.strip("`")
        for part in line.split("but ")[1].split(" prints")[0].replace(" and ", ", ").split(", ")
    )
