"""pylock.toml's strings: every text TOML can hold comes back from tomllib as written (a
character outside the BMP, U+007F, control characters, quotes, backslashes), and a lone
surrogate, which no TOML file can hold, is refused with a message rather than written."""

from __future__ import annotations

import pytest
import tomllib
from hypothesis import given
from hypothesis import strategies as st

from gpuenv.lock.errors import LockError
from gpuenv.lock.pylock.write import toml_string

SCALARS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(SCALARS)
def test_any_text_reads_back_as_written(text: str) -> None:
    assert tomllib.loads(f"x = {toml_string(text)}")["x"] == text


@pytest.mark.parametrize(
    "text", ["GPU \U0001f680 lab", "\x7f", "a\x00b", 'say "hi"\\', "tab\there\nnext", "\x1b[31m"]
)
def test_the_cases_json_quoting_got_wrong(text: str) -> None:
    written = toml_string(text)
    assert tomllib.loads(f"x = {written}")["x"] == text
    assert "\\ud83d" not in written.lower()  # no surrogate pair: TOML forbids them


@pytest.mark.parametrize("surrogate", ["\ud800", "\udbff", "\udc00", "\udfff"])
def test_a_lone_surrogate_is_refused(surrogate: str) -> None:
    with pytest.raises(LockError, match="lone surrogate"):
        toml_string(f"bad {surrogate} text")


@pytest.mark.parametrize("edge", ["\ud7ff", "\ue000"])
def test_the_characters_beside_the_surrogates_are_written(edge: str) -> None:
    assert tomllib.loads(f"x = {toml_string(edge)}")["x"] == edge
