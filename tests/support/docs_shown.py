"""The commands README.md and docs/ show, read from the Markdown: a shown run is an indented
block whose first line is `$ gpuenv ...`, its output the block's lines below it (`...` stands for
lines left out, and a line ending in `...` for the rest of that line). A block is illustrative
when the line before it (or the block's own first line) says `<!-- illustrative: why -->`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
ILLUSTRATIVE = re.compile(r"<!--\s*illustrative:\s*(.+?)\s*-->")


@dataclass(frozen=True)
class ShownRun:
    page: Path
    line: int  # of the `$ gpuenv` line, 1-based
    command: str  # as shown, after `$ `
    output: tuple[str, ...]
    illustrative: str  # the reason given, or ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    def argv(self) -> list[str]:
        """The command's words after `gpuenv`, up to a shell operator."""
        words = shlex.split(self.command, comments=True)
        cut = [i for i, w in enumerate(words) if w in ("|", "&&", ">", "2>/dev/null", ";")]
        return words[1 : cut[0] if cut else len(words)]


def shown_runs(page: Path) -> list[ShownRun]:
    lines = page.read_text(encoding="utf-8").splitlines()
    runs = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("$ gpuenv"):
            continue
        indent = len(line) - len(line.lstrip())
        if i > 0 and lines[i - 1].strip().startswith("$ gpuenv"):
            continue  # a second command of the same block: shown, not compared
        output = []
        for below in lines[i + 1 :]:
            if not below.strip() or len(below) - len(below.lstrip()) < indent:
                break
            if below.strip().startswith("$ "):
                break
            output.append(below[indent:])
        before = lines[i - 1] if i > 0 else ""
        reason = ILLUSTRATIVE.search(before) or ILLUSTRATIVE.search(line)
        runs.append(
            ShownRun(page, i + 1, stripped[2:], tuple(output), reason.group(1) if reason else "")
        )
    return runs


def all_runs() -> list[ShownRun]:
    return [run for page in PAGES for run in shown_runs(page)]


def missing_lines(shown: tuple[str, ...], printed: str) -> list[str]:
    """The shown lines the program did not print, in order: each line found in what was printed
    (whitespace folded), after the one before it. A line `...` skips any lines; `...` within a
    line stands for any text there."""
    actual = [" ".join(line.split()) for line in printed.splitlines()]
    at = 0
    missing = []
    for line in shown:
        want = " ".join(line.split())
        if want in ("", "..."):
            continue
        pattern = re.compile(".*".join(re.escape(piece) for piece in want.split("...")))
        for j in range(at, len(actual)):
            if pattern.fullmatch(actual[j]):
                at = j + 1
                break
        else:
            missing.append(line)
    return missing
