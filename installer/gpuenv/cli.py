"""The gpuenv command line: thin: parse, call, print. Each command lives in gpuenv.commands and
is imported only when it runs, so a command pays only for its own imports."""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any, Optional

import click

from gpuenv import __version__
from gpuenv.commands.table import COMMANDS
from gpuenv.output.wrap import echo


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return _with_global_options(command)


def _set_verbosity(level_name: str) -> Any:
    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            from gpuenv import output

            output.set_verbosity(getattr(output, level_name))

    return callback


_GLOBAL_OPTIONS = (
    (("-q", "--quiet"), "QUIET", "Print only results and errors (as `gpuenv -q`)."),
    (
        ("-v", "--verbose"),
        "VERBOSE",
        "Also show each uv and py-rattler command run (as `gpuenv -v`).",
    ),
)


def _with_global_options(command: click.Command) -> click.Command:
    """The group's -q and -v after any subcommand too (`gpuenv verify -q`), where the command
    has no option of that name of its own (resolve's -v lists rejected candidates)."""
    if getattr(command, "_gpuenv_global_options", False):
        return command
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_global_options(sub)
    else:
        taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
        for opts, level, help_text in _GLOBAL_OPTIONS:
            if not taken.intersection(opts):
                command.params.append(
                    click.Option(
                        list(opts),
                        is_flag=True,
                        expose_value=False,
                        callback=_set_verbosity(level),
                        help=help_text,
                    )
                )
    command._gpuenv_global_options = True  # type: ignore[attr-defined]
    return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpuenv")
@click.option("-v", "--verbose", is_flag=True, help="Also show each uv and py-rattler command run.")
@click.option("-q", "--quiet", is_flag=True, help="Print only results and errors.")
def cli(verbose: bool, quiet: bool) -> None:
    """Which CUDA, cuDNN, TensorFlow, PyTorch and JAX this GPU needs: detect, resolve, lock, install, verify."""
    from gpuenv import output
    from gpuenv.commands import json_output

    json_output.reset()
    if verbose and quiet:
        raise click.UsageError("-v and -q exclude each other")
    output.set_verbosity(output.VERBOSE if verbose else output.QUIET if quiet else output.NORMAL)


def main(argv: Any = None) -> None:
    from gpuenv.commands import json_output

    json_output.reset()
    args = list(sys.argv[1:] if argv is None else argv)  # only to look for --json
    try:
        code = cli.main(args=argv, prog_name="gpuenv", standalone_mode=False)
    except click.exceptions.Abort:
        echo("gpuenv: aborted", err=True)
        json_output.emit_error("aborted", 130)
        sys.exit(130)
    except click.ClickException as exc:
        message = _show_click_error(exc)
        if json_output.requested_in_failed_parse(getattr(exc, "ctx", None), args):
            json_output.emit_error(message, exc.exit_code)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:
        from gpuenv.errors import exit_code

        status = exit_code(exc)
        if status is None:
            raise  # a bug: the traceback is the most useful report
        from gpuenv.output.redact import redact_text

        message = redact_text(str(exc))  # an index URL's password is never shown
        echo(f"gpuenv: error: {message}", err=True)
        json_output.emit_error(message, status)
        sys.exit(status)
    if argv is None:
        # The program itself (not a caller of main()) ends here: spare the interpreter's last
        # garbage collection, a walk over every object made (tens of thousands for the parsed
        # knowledge base alone), which costs `gpuenv resolve` more than resolving does. The
        # command's output is written; atexit handlers and thread joins still run.
        gc.freeze()
    sys.exit(code if isinstance(code, int) else 0)


def _show_click_error(exc: click.ClickException) -> str:
    """Usage errors in the same one-paragraph form as every other error, with where to look."""
    from gpuenv.output.redact import redact_text

    message = redact_text(exc.format_message())
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        message += f" (see `{exc.ctx.command_path} --help`)"
    echo(f"gpuenv: error: {message}", err=True)
    return message
