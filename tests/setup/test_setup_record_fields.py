"""A setup record is read field by field as untrusted input: a field of the wrong type reads as
unset, a Python that is no X.Y is dropped, a request list with one bad entry is dropped whole."""

from __future__ import annotations

import pytest

from gpuenv.setup.record import SetupRecord


@pytest.mark.parametrize("python", ["../x", "3", "3.11; rm -rf /", 3.11, ["3.11"], None])
def test_a_python_that_is_no_x_y_is_dropped(python: object) -> None:
    record = SetupRecord.from_json({"python": python})
    assert record is not None and record.python is None


def test_a_good_record_reads_back() -> None:
    data = SetupRecord(python="3.11", frameworks=("jax",), packages=("tinytool<2",)).to_json()
    assert SetupRecord.from_json(data) == SetupRecord(
        python="3.11", frameworks=("jax",), packages=("tinytool<2",)
    )


@pytest.mark.parametrize(
    "damage",
    [
        {"frameworks": ["jax", "evil @ file:///tmp/x"]},
        {"packages": "tinytool"},
        {"verified": "yes"},
        {"summary": ["not", "a", "mapping"]},
    ],
)
def test_a_damaged_field_reads_as_unset(damage: dict[str, object]) -> None:
    record = SetupRecord.from_json(damage)
    assert record is not None
    assert record.frameworks == () and record.packages == ()
    assert record.verified is False and record.summary == {}


def test_no_json_object_is_no_record() -> None:
    assert SetupRecord.from_json(["a", "list"]) is None
