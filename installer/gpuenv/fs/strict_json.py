"""JSON from a file gpuenv did not necessarily write, parsed so that no input is a crash.

Python's json accepts NaN and Infinity (not JSON), turns 1e5000 into infinity, refuses ints over
4300 digits with a ValueError of its own, and recurses on nesting until RecursionError. Here each
of those is a ValueError with a plain reason, which every caller already turns into its message.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_NUMBER_CHARS = 100  # no number gpuenv reads needs more digits


def _number(text: str, kind: type) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number with {len(text)} digits")
    value = kind(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{text[:20]} is not a finite number")
    return value


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes) -> Any:
    """`json.loads`, with NaN, infinities, huge numbers and deep nesting refused (ValueError)."""
    try:
        return json.loads(
            text,
            parse_constant=_constant,
            parse_int=lambda t: _number(t, int),
            parse_float=lambda t: _number(t, float),
        )
    except RecursionError:
        raise ValueError("nested too deeply") from None
