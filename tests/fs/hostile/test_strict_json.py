"""The strict JSON reader (gpuenv.fs.strict_json) at its edges: the exact digit bound, finite
floats kept, and the refusal of a non-finite one naming the number's start (what --machine,
lockfile and metadata errors show)."""

from __future__ import annotations

import pytest

from gpuenv.fs import strict_json


def test_numbers_up_to_100_characters_are_read_longer_ones_refused() -> None:
    assert strict_json.loads("9" * 100) == int("9" * 100)
    assert strict_json.loads("0." + "5" * 98) == float("0." + "5" * 98)
    with pytest.raises(ValueError, match=r"^a number with 101 digits$"):
        strict_json.loads("9" * 101)


def test_finite_floats_are_kept() -> None:
    assert strict_json.loads('{"driver": 550.54, "big": 1e308, "small": -2.5e-300}') == {
        "driver": 550.54,
        "big": 1e308,
        "small": -2.5e-300,
    }


def test_an_overflowing_float_is_refused_by_its_first_20_characters() -> None:
    text = "1234567890.1234567890123e5000"
    with pytest.raises(ValueError) as err:
        strict_json.loads(f"[{text}]")
    assert str(err.value) == "1234567890.123456789 is not a finite number"
