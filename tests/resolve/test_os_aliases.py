"""`--os` takes what people write (issue 21): win10, win11, ubuntu, wsl2, macosx name their
family, and the command line says which family it planned for."""

from __future__ import annotations

import json

import pytest

from lockdata import in_process


@pytest.mark.parametrize(
    ("written", "platform"),
    [
        ("win10", "win-64"),
        ("Windows11", "win-64"),
        ("ubuntu", "linux-64"),
        ("wsl2", "linux-64"),
        ("macosx", "osx-arm64"),
        ("windows", "win-64"),
    ],
)
def test_an_os_as_people_write_it(written: str, platform: str) -> None:
    code, out, err = in_process(
        "resolve",
        "jax",
        "--os",
        written,
        "--arch",
        "arm64" if platform == "osx-arm64" else "x86_64",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["platform"] == platform
    said = f"--os {written}: planned for" in err
    assert said == (written.lower() not in ("windows", "linux", "wsl", "macos"))


def test_wsl2_is_planned_as_wsl_not_plain_linux() -> None:
    code, out, err = in_process(
        "resolve", "torch", "--os", "wsl2", "--gpu", "8.6", "--driver", "560.94", "--json"
    )
    assert code == 0, err
    assert (
        "WSL" in " ".join(json.loads(out)["reasons"] + json.loads(out)["warnings"]) or "wsl" in out
    )


def test_an_os_nobody_runs_is_refused_with_the_names() -> None:
    code, _, err = in_process("resolve", "jax", "--os", "beos")
    assert code == 2
    assert "expected one of linux, windows, wsl, macos" in err and "win10" in err


def test_a_model_number_without_its_suffix_names_the_models() -> None:
    """`--gpu 940` is neither compute capability 94.0 nor a model: the 940M and 940MX are meant
    (NVIDIA's GeForce 940M/940MX product pages), and the message says so."""
    code, _, err = in_process("resolve", "torch", "--gpu", "940", "--os", "windows")
    assert code == 2
    assert "did you mean" in err and "GeForce 940M" in err and "GeForce 940MX" in err
    assert "94.0 belongs to no known GPU generation" not in err
