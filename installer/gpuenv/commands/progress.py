"""Progress for people: a bar that rewrites one line on a terminal, plain lines elsewhere."""

from __future__ import annotations

import sys
from typing import Optional

import click


class Reporter:
    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._last: Optional[str] = None

    def say(self, message: str) -> None:
        if not self.quiet:
            click.echo(message, err=True)

    def progress(self, name: str, done: int, total: Optional[int]) -> None:
        if self.quiet:
            return
        if self.tty:
            if total:
                width = 30
                filled = int(width * done / total)
                bar = "#" * filled + "-" * (width - filled)
                line = f"\r  {name[:48]:<48} [{bar}] {done / 1e6:7.1f}/{total / 1e6:.1f} MB"
            else:
                line = f"\r  {name[:48]:<48} {done / 1e6:7.1f} MB"
            click.echo(line, err=True, nl=False)
        elif name != self._last:
            size = f" ({total / 1e6:.1f} MB)" if total else ""
            click.echo(f"  downloading {name}{size}", err=True)
        self._last = name

    def done_downloading(self) -> None:
        if self.tty and self._last and not self.quiet:
            click.echo("", err=True)
