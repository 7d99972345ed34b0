"""One vocabulary for what a file held where another kind of value was expected."""

from __future__ import annotations

import pytest

from gpuenv.fs.type_names import MAX_SHOWN, type_name


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "true/false"),  # before int: a bool is an int to Python
        (0, "an integer"),
        (3.1, "a number"),
        ("x", "a string"),
        ([], "a list"),
        ({}, "an object"),
        (b"x", "a bytes"),
    ],
)
def test_each_kind_has_one_name(value: object, name: str) -> None:
    assert type_name(value) == name


def test_each_format_names_its_mappings_and_may_show_the_value() -> None:
    assert type_name({"a": 1}, mapping="a table", show=True) == "a table"
    assert type_name(3.1, show=True) == "a number (3.1)"
    shown = type_name("x" * 100, show=True)
    assert shown.startswith("a string ('xxx") and shown.endswith("...)")
    assert len(shown) == len("a string ()") + MAX_SHOWN
