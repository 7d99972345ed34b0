"""`--json` on every command: exactly one JSON document on stdout, nothing else there.

Two kinds of document (docs/stages.md, "Machine-readable output"):
- a stage's artifact keeps its own shape and `schema` key: the Machine (`detect`), the Plan
  (`resolve`), the Report (`verify`), the diagnosis (`doctor`), the store listing (`envs`);
- every other command prints a result: `{"gpuenv_json": 1, "command": "lock", "ok": true, ...}`.

When a command given `--json` fails, the one-line `gpuenv: error: ...` still goes to stderr and
the exit status is unchanged; stdout gets the error object
`{"gpuenv_json": 1, "command": ..., "ok": false, "error": MESSAGE, "exit": STATUS}`, so a script
that parses stdout always gets JSON. Progress, notes and warnings stay on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Optional, TypeVar

import click

SCHEMA_KEY = "gpuenv_json"
SCHEMA = 1  # raised only when a key changes meaning or goes away; new keys keep it

F = TypeVar("F", bound=Callable[..., Any])

# What this run asked for. Set while the command line is parsed (--json is eager: it is known
# before any other option can fail), read by the CLI's error handler after the command is gone.
_requested = False
_command: Optional[str] = None
_emitted = False


def reset() -> None:
    """A new command line: nothing asked for, nothing printed yet (in-process runs reuse us)."""
    global _requested, _command, _emitted
    _requested, _command, _emitted = False, None, False


def json_option(
    help: str = "Print the result as one JSON document on stdout.", expose: bool = True
) -> Callable[[F], F]:
    """The `--json` flag, remembered for the error handler; passed as the `as_json` argument
    unless `expose` is False (then read it with requested())."""

    def decorate(func: F) -> F:
        return click.option(
            "--json",
            "as_json",
            is_flag=True,
            is_eager=True,
            expose_value=expose,
            callback=_remember,
            help=help,
        )(func)

    return decorate


def _remember(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value or _requested:  # `envs --json remove NAME`: the subcommand is the one answering
        _ask(ctx)
    return value


def _ask(ctx: click.Context) -> None:
    global _requested, _command
    _requested = True
    _command = command_name(ctx)


def command_name(ctx: click.Context) -> str:
    """`lock`, `envs remove`: the command path without the program's name."""
    parts = ctx.command_path.split(" ", 1)
    return parts[1] if len(parts) > 1 else parts[0]


def requested() -> bool:
    return _requested


def requested_in_failed_parse(ctx: Optional[click.Context], args: Iterable[str]) -> bool:
    """A command line click could not parse (an unknown option, a missing argument) never ran
    --json's callback: it still counts when that command has --json and the words before `--`
    include it."""
    if _requested:
        return True
    if ctx is None or not any("--json" in p.opts for p in ctx.command.params):
        return False
    words = list(args)
    if "--" in words:
        words = words[: words.index("--")]
    if "--json" not in words:
        return False
    _ask(ctx)
    return True


def result(command: str, ok: bool = True, exit_status: int = 0, **fields: Any) -> dict[str, Any]:
    """A result document: the schema version, the command, whether it succeeded, its fields.
    A result that is not ok carries the exit status the command ends with."""
    doc: dict[str, Any] = {SCHEMA_KEY: SCHEMA, "command": command, "ok": ok}
    if not ok:
        doc["exit"] = exit_status or 1
    doc.update(fields)
    return doc


def emit(document: Mapping[str, Any] | list[Any]) -> None:
    """Print the run's one JSON document. ASCII with escapes: any console encoding (a Windows
    code page behind a pipe) can carry it."""
    global _emitted
    from gpuenv.output.redact import redact_text

    click.echo(redact_text(json.dumps(document, indent=2)))  # no index URL's password
    _emitted = True


def emit_result(ctx: click.Context, ok: bool = True, exit_status: int = 0, **fields: Any) -> None:
    emit(result(command_name(ctx), ok, exit_status, **fields))


def emit_error(message: str, status: int) -> None:
    """The error object, when --json was asked for and no document has been printed yet (a
    second document would make stdout unparseable)."""
    if not _requested or _emitted:
        return
    emit(result(_command or "gpuenv", False, status, error=message))
