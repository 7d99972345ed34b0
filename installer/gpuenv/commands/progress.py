"""Progress for people: one bar per download that fits the terminal's width (click's own bar)
on a terminal, a plain line per file elsewhere, nothing under -q."""

from __future__ import annotations

import sys
from typing import Any, Optional

import click

from gpuenv import output
from gpuenv.output.wrap import echo


class Reporter:
    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet or output.quiet()
        self.tty = sys.stderr.isatty()
        self._last: Optional[str] = None
        self._bar: Any = None  # click's ProgressBar for the file being downloaded
        self._shown = 0

    def say(self, message: str) -> None:
        if not self.quiet:
            from gpuenv.output.redact import redact_text

            echo(redact_text(message), err=True)  # notes name index URLs

    def progress(self, name: str, done: int, total: Optional[int]) -> None:
        if self.quiet:
            return
        if not self.tty:
            if name != self._last:
                size = f" ({total / 1e6:.1f} MB)" if total else ""
                echo(f"  downloading {name}{size}", err=True)
            self._last = name
            return
        if name != self._last:
            self._finish()
            self._bar = click.progressbar(
                length=total or 0,
                label=f"  {_shorten(name)}",
                file=sys.stderr,
                width=0,  # the bar takes what the terminal's width leaves: no wrapped lines
                show_eta=False,
                show_percent=bool(total),
            )
            self._bar.__enter__()
            self._shown = 0
            self._last = name
        self._bar.update(done - self._shown)
        self._shown = done

    def done_downloading(self) -> None:
        self._finish()

    def _finish(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _shorten(name: str, width: int = 40) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."
