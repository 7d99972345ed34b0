"""A framework's candidates, best first, each evaluated only when the search first asks for it.

The search (gpuenv.resolve.combine) walks combinations best first and stops at the first that
agrees, usually among each framework's newest few releases: `resolve torch tensorflow` on a GPU
machine evaluated 152 releases' GPU builds to use those of about ten. What is never
asked for is never evaluated; `drain` evaluates the rest where every rejection is wanted
(`gpuenv explain`, `resolve -v`) or where the search failed (its error names them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from gpuenv.resolve.rules import Candidate


class Ranked:
    """Candidates from `source` (best first), kept as they are read. `ranked[i]` reads on up to
    rank i; a rank past the last candidate raises IndexError, as a list's does. Not a list:
    what needs all of them (a length, a copy) asks `drain()` for them."""

    def __init__(self, source: Iterator[Candidate]) -> None:
        self._read: list[Candidate] = []
        self._source: Optional[Iterator[Candidate]] = source

    def _read_to(self, index: int) -> None:
        while self._source is not None and len(self._read) <= index:
            nxt = next(self._source, None)
            if nxt is None:
                self._source = None
            else:
                self._read.append(nxt)

    def __getitem__(self, index: int) -> Candidate:
        if index < 0:
            raise IndexError("a candidate is asked for by its rank, from the best (0)")
        self._read_to(index)
        return self._read[index]

    def drain(self) -> list[Candidate]:
        """Every candidate, the ones not yet read evaluated now."""
        while self._source is not None:
            self._read_to(len(self._read))
        return self._read
