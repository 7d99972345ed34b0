"""Text for people fits the terminal (80 columns off a terminal): wrapped at word boundaries
with hanging indents, nothing cut, `--json` untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuenv.output.wrap import DEFAULT_WIDTH, HANGING, wrap, wrap_line

MACHINE = ["--gpu", "GTX 1080 Ti", "--driver", "535.183.01", "--os", "linux"]
WORDS = st.lists(st.text("abcdefghij/:.-", min_size=1, max_size=30), min_size=1, max_size=60)


@given(WORDS, st.integers(40, 120))
def test_nothing_is_cut_and_no_line_is_wider_than_it_must_be(
    words: list[str], columns: int
) -> None:
    line = "  - " + " ".join(words)
    lines = wrap_line(line, columns)
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())  # every word, in order
    for piece in lines:
        assert len(piece) <= columns or len(piece.split()) == 1 or piece.strip() in words


def test_hanging_indents() -> None:
    item = wrap_line("  - " + "word " * 30, 40)
    assert all(later.startswith("    word") for later in item[1:])  # under the item's text
    note = wrap_line("note: " + "word " * 30, 40)
    assert all(later.startswith(" " * HANGING + "word") for later in note[1:])
    numbered = wrap_line("[3] " + "word " * 30, 40)
    assert all(later.startswith("    word") for later in numbered[1:])


def test_line_breaks_and_short_lines_are_kept() -> None:
    text = "Python       3.13\n\nWhy:\n  - short"
    assert wrap(text, 40) == text


def test_a_word_longer_than_the_line_stays_whole() -> None:
    url = "https://docs.nvidia.com/" + "x" * 100
    assert wrap_line(f"source: {url} here", 60) == ["source:", f"  {url}", "  here"]


def _run(*args: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GPUENV_COLUMNS")}
    if columns:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def _gpuenv(*args: str, columns: str | None = None) -> str:
    done = _run(*args, columns=columns)
    return done.stdout + done.stderr


def _too_wide(text: str, columns: int) -> list[str]:
    """Lines wider than `columns` that are more than one unbreakable word."""
    return [line for line in text.splitlines() if len(line) > columns and len(line.split()) > 1]


@pytest.mark.parametrize("command", ["resolve", "explain"])
def test_resolve_and_explain_fit_eighty_columns_off_a_terminal(command: str) -> None:
    text = _gpuenv(command, "torch", "tensorflow", *MACHINE)
    assert _too_wide(text, DEFAULT_WIDTH) == []
    assert len(text.splitlines()) > 20
    wide = _gpuenv(command, "torch", "tensorflow", *MACHINE, columns="200")
    assert any(len(line) > DEFAULT_WIDTH for line in wide.splitlines())  # $COLUMNS is honoured


def test_doctor_faq_fits_and_json_is_unchanged() -> None:
    assert _too_wide(_gpuenv("doctor", "--faq"), DEFAULT_WIDTH) == []
    plan = json.loads(
        _gpuenv("resolve", "torch", *MACHINE, "--json", columns="40").split("\n}")[0] + "\n}"
    )
    assert plan["frameworks"]["torch"]["variant"].startswith("cu")


def test_gpuenv_columns_sets_the_width_and_zero_turns_wrapping_off() -> None:
    args = ("explain", "torch", "tensorflow", *MACHINE)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GPUENV_COLUMNS")}
    for value, widest in (("60", 60), ("0", None)):
        done = subprocess.run(
            [sys.executable, "-m", "gpuenv", *args],
            capture_output=True,
            text=True,
            env={**env, "GPUENV_COLUMNS": value, "COLUMNS": "100"},
            timeout=120,
        )
        lines = (done.stdout + done.stderr).splitlines()
        if widest:
            assert _too_wide(done.stdout + done.stderr, widest) == []
        else:
            assert max(len(line) for line in lines) > 300  # explain's long reasons, whole


TEXT = st.text(st.sampled_from("ab /:-\t\r\x0b"), max_size=200)


@given(TEXT, st.integers(1, 60), st.sampled_from(["", "  ", "    ", " " * 70]))
def test_lines_are_wrapped_as_textwrap_wraps_them(text: str, columns: int, later: str) -> None:
    import textwrap

    from gpuenv.output.wrap import _greedy

    assert _greedy(text, columns, later) == textwrap.wrap(
        text,
        width=columns,
        subsequent_indent=later,
        break_long_words=False,
        break_on_hyphens=False,
    )


@given(st.text(st.sampled_from("-*\u2022[]().1 2a\u0663"), max_size=12))
def test_a_list_items_text_starts_where_its_marker_pattern_ends(line: str) -> None:
    import re

    from gpuenv.output.wrap import item_text_start

    marker = re.compile(r"(?:[-*\u2022]|\d+[.)]|\[\d+\]) +").match(line)
    assert item_text_start(line) == (marker.end() if marker else 0)
