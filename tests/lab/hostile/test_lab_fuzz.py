"""A property-based fuzzer over lab-file structure: random TOML documents and mutations of the
example lab file. Whatever the file holds, `gpuenv lock --lab FILE --check` ends with a status
and a message (0, 1 for missing lockfiles, 2 bad input, 3 no stack fits), never a traceback, and
writes nothing anywhere: the lab file's folder tree is unchanged afterwards."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuenv.cli import main
from gpuenv.lab.schema import CLASS_KEYS, LAB_KEYS, STACK_KEYS, TOP_KEYS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "vision-lab" / "lab.toml"
KEYS = (*TOP_KEYS, *LAB_KEYS, *STACK_KEYS, *CLASS_KEYS)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# --- a small TOML writer (the test needs no extra dependency) -----------------------------


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_string(k)} = {_value(v)}" for k, v in value.items()) + "}"


def to_toml(data: dict[str, Any]) -> str:
    lines = [f"{_string(k)} = {_value(v)}" for k, v in data.items() if not _is_table(v)]
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"[{_string(key)}]")
            lines += [f"{_string(k)} = {_value(v)}" for k, v in value.items()]
        elif _is_table(value):
            for row in value:
                lines.append(f"[[{_string(key)}]]")
                lines += [f"{_string(k)} = {_value(v)}" for k, v in row.items()]
    return "\n".join(lines) + "\n"


def _is_table(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
    )


# --- strategies -------------------------------------------------------------------------------

keys = st.one_of(st.sampled_from(KEYS), st.text(min_size=1, max_size=12))
scalars = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        ["torch", "jax", "none", "linux", "windows", "8.6", "6.0-6.1", "550.54.14", "3.10", "../x"]
    ),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=10,
)
documents = st.dictionaries(
    keys,
    st.one_of(
        values,
        st.dictionaries(keys, values, max_size=5),
        st.lists(st.dictionaries(keys, values, max_size=6), min_size=1, max_size=3),
    ),
    max_size=4,
)


# plausible values per key, so that many mutants are valid lab files that reach the resolver
PLAUSIBLE: dict[str, list[Any]] = {
    "requirements": [["jax"], ["torch<2.2"], ["tensorflow==2.10.*"], ["torch", "jax"]],
    "packages": [[], ["numpy<2"], ["jupyterlab", "pandas>=2"]],
    "python": ["3.9", "3.10", "3.12", "3.13"],
    "os": ["linux", "windows", "wsl", "macos"],
    "arch": ["x86_64", "aarch64", "arm64"],
    "gpu": ["none", "GeForce RTX 3090", "GeForce 940M", "Tesla K80"],
    "compute_capability": ["8.6", "6.0-6.1", "7.5", "3.7", "5.0-9.0", "12.0"],
    "driver": ["390.157", "470.256.02", "535.183.01", "570.86.15"],
    "priority": [0, 1, -1],
    "name": ["a", "b.c", "x-y_z"],
    "lockfiles": ["locks", "../../lockfiles", "deep/er"],
}


@st.composite
def mutated_example(draw: st.DrawFn) -> dict[str, Any]:
    """The example lab file with a few keys dropped, retyped, misspelt, added, re-valued."""
    data = copy.deepcopy(tomllib.loads(EXAMPLE.read_text(encoding="utf-8")))
    ops = ["plausible"] * 4 + ["drop", "drop-class", "retype", "misspell", "add", "duplicate"]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        rows = data.get("class")
        rows = rows if isinstance(rows, list) else []
        tables = [data, data.get("lab"), data.get("stack"), *rows]
        table = draw(st.sampled_from([t for t in tables if isinstance(t, dict)]))
        op = draw(st.sampled_from(ops))
        present = sorted(table)
        if op == "plausible":
            key = draw(st.sampled_from(sorted(PLAUSIBLE)))
            table[key] = draw(st.sampled_from(PLAUSIBLE[key]))
        elif op == "drop" and present:
            del table[draw(st.sampled_from(present))]
        elif op == "drop-class" and rows:
            rows.pop(draw(st.integers(min_value=0, max_value=len(rows) - 1)))
        elif op == "retype" and present:
            table[draw(st.sampled_from(present))] = draw(values)
        elif op == "misspell" and present:
            key = draw(st.sampled_from(present))
            cut = draw(st.integers(min_value=0, max_value=max(len(key) - 1, 0)))
            table[key[:cut] + key[cut + 1 :] or "x"] = table.pop(key)
        elif op == "add":
            table[draw(keys)] = draw(values)
        elif op == "duplicate" and rows:
            rows.append(copy.deepcopy(draw(st.sampled_from(rows))))
    return data


# --- the property -----------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def check_lab_text(text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gpuenv-lab-fuzz-") as tmp:
        root = Path(tmp)
        folder = root / "a" / "b"  # the example's lockfiles = "../../lockfiles" stays in here
        folder.mkdir(parents=True)
        lab = folder / "lab.toml"
        lab.write_text(text, encoding="utf-8")
        before = _tree(root)
        err = io.StringIO()
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(io.StringIO()),
            pytest.raises(SystemExit) as done,
        ):
            main(["lock", "--lab", str(lab), "--check"])
        code = done.value.code
        assert code in (0, 1, 2, 3), (code, err.getvalue(), text)
        if code in (2, 3):
            assert err.getvalue().strip(), text  # a message, not silence
        assert "Traceback" not in err.getvalue()
        assert _tree(root) == before, text  # --check writes nothing, wherever lockfiles points


@pytest.fixture(autouse=True)
def private_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@FUZZ
@given(documents)
def test_random_documents(data: dict[str, Any]) -> None:
    check_lab_text(to_toml(data))


@FUZZ
@given(mutated_example())
def test_mutated_example(data: dict[str, Any]) -> None:
    check_lab_text(to_toml(data))


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes(raw: bytes) -> None:
    check_lab_text(raw.decode("utf-8", errors="replace"))


def test_the_writer_round_trips_the_example() -> None:
    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert tomllib.loads(to_toml(data)) == data
    assert math.isclose(tomllib.loads(to_toml({"x": 0.1}))["x"], 0.1)
    assert os.path.basename(EXAMPLE) == "lab.toml"
