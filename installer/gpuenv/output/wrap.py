"""Text for people, wrapped to the terminal's width (80 columns when the output is no
terminal), at word boundaries, with hanging indents: a list item's later lines start under its
text, any other line's two columns in. Nothing is cut: a word longer than the width (a URL, a
path) stays whole on a line of its own. JSON and shell code never come through here.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

import click

DEFAULT_WIDTH = 80  # where the output is no terminal (a file, a pipe, CI's log)
MIN_WIDTH = 40  # below this, wrapping makes text harder to read, not easier
HANGING = 2  # later lines of a line that is no list item start this many columns in


WIDTH_ENV = "GPUENV_COLUMNS"  # the width to wrap to; 0: do not wrap (for logs that are grepped)
NO_WRAP = 1 << 30


def width(stream: TextIO) -> int:
    """The columns `stream` shows: $GPUENV_COLUMNS where set (0: no wrapping), $COLUMNS where
    set (as shells and tmux set it), the terminal's own width on a terminal, else
    DEFAULT_WIDTH."""
    ours = os.environ.get(WIDTH_ENV, "")
    if ours.isdigit():
        return max(MIN_WIDTH, int(ours)) if int(ours) else NO_WRAP
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    try:
        if stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):  # a stream with no file behind it
        pass
    return DEFAULT_WIDTH


def wrap_line(line: str, columns: int) -> list[str]:
    """One line as lines of at most `columns` (but for words longer than that)."""
    if len(line) <= columns or not line.strip():
        return [line]
    body = line.lstrip(" ")
    lead = " " * (len(line) - len(body))
    later = lead + " " * (item_text_start(body) or HANGING)
    return _greedy(line, columns, later) or [line]


def item_text_start(line: str) -> int:
    """Where a list item's text starts, after its marker ("- ", "* ", "\u2022 ", "1. ", "2) ",
    "[3] ") and the blanks after that; 0 where the line is no list item. By hand: the pattern
    took 0.3 ms to compile, in every command."""
    if line[:1] in ("-", "*", "\u2022"):
        end = 1
    elif line[:1] == "[":
        end = _after_number(line, 1, "]")
    else:
        end = _after_number(line, 0, ".)")
    text = len(line) - len(line[end:].lstrip(" "))
    return text if end and text > end else 0


def _after_number(line: str, start: int, closers: str) -> int:
    """Past the digits from `start` and the one closer after them, or 0 where they are not."""
    end = start
    while end < len(line) and line[end].isdecimal():
        end += 1
    if end == start or end == len(line) or line[end] not in closers:
        return 0
    return end + 1


# what textwrap treats as whitespace (ASCII only), each made a blank as it does
_BLANKS = str.maketrans("\t\n\x0b\x0c\r", "     ")
_CHUNKS = re.compile(r"([\t\n\x0b\x0c\r ]+)")


def _greedy(line: str, columns: int, later: str) -> list[str]:
    """textwrap.wrap(line, columns, subsequent_indent=later) with break_long_words,
    break_on_hyphens off (a word longer than a line stays whole, on a line of its own), as
    textwrap words it: importing textwrap compiles its word-splitting patterns (1 ms of every
    command that prints a long line)."""
    chunks = [c for c in _CHUNKS.split(line.expandtabs().translate(_BLANKS)) if c]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        indent = later if lines else ""
        room = columns - len(indent)
        if lines and not chunks[-1].strip():
            chunks.pop()  # a later line starts at a word, not at the blank before it
        taken: list[str] = []
        used = 0
        while chunks and used + len(chunks[-1]) <= room:
            used += len(chunks[-1])
            taken.append(chunks.pop())
        if chunks and not taken:
            taken.append(chunks.pop())  # a word longer than the line: whole, alone
        if taken and not taken[-1].strip():
            taken.pop()  # nor does a line end with a blank
        if taken:
            lines.append(indent + "".join(taken))
    return lines


def wrap(text: str, columns: int) -> str:
    """Every line of `text` wrapped; the line breaks it has are kept."""
    return "\n".join(piece for line in text.split("\n") for piece in wrap_line(line, columns))


def echo(message: object = "", *, err: bool = False) -> None:
    """click.echo, wrapped to the width of the stream it writes to."""
    stream = sys.stderr if err else sys.stdout
    click.echo(wrap(str(message), width(stream)), err=err)
