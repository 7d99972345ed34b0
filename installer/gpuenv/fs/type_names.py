"""What kind of value a file held where another was expected, in words a user recognises: one
vocabulary for every reader (lockfiles in JSON, YAML or TOML, lab files, plans). Each format
names its mappings its own way (a JSON object, a YAML mapping, a TOML table)."""

from __future__ import annotations

MAX_SHOWN = 40  # characters of the value quoted back


def type_name(value: object, *, mapping: str = "an object", show: bool = False) -> str:
    """`null`, `true/false`, `an integer`, `a number`, `a string`, `a list`, `mapping`, or
    `a <type>`; with
    `show`, a scalar's value follows in parentheses, cut to MAX_SHOWN characters."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return mapping
    if isinstance(value, bool):
        name = "true/false"
    elif isinstance(value, int):
        name = "an integer"
    elif isinstance(value, float):
        name = "a number"
    elif isinstance(value, str):
        name = "a string"
    elif isinstance(value, list):
        name = "a list"
    else:
        return f"a {type(value).__name__}"
    if not show:
        return name
    shown = repr(value)
    return f"{name} ({shown if len(shown) <= MAX_SHOWN else shown[: MAX_SHOWN - 3] + '...'})"
