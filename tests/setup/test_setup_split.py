"""`gpuenv setup --split torch tensorflow jupyterlab`: one environment per framework, named after
it, each with the extra packages (for frameworks whose CUDA libraries cannot share one)."""

from __future__ import annotations

import click
import pytest

from gpuenv.commands.setup import _environments
from gpuenv.setup.options import SetupUsageError
from installrepos import gpuenv


def test_one_environment_per_framework_each_with_the_packages() -> None:
    got = _environments(
        ("torch>=2", "tensorflow", "jupyterlab", "torch<3"), "default", True, None, False
    )
    assert got == [
        (("torch>=2", "torch<3", "jupyterlab"), "torch"),
        (("tensorflow", "jupyterlab"), "tensorflow"),
    ]
    assert _environments(("torch", "tensorflow"), "lab", False, None, False) == [
        (("torch", "tensorflow"), "lab")
    ]


@pytest.mark.parametrize(
    ("requirements", "name", "as_json"),
    [
        (("torch",), "default", False),
        (("torch", "jax"), "lab", False),
        (("torch", "jax"), "default", True),
    ],
)
def test_split_refuses_what_it_cannot_honour(requirements, name, as_json) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((click.UsageError, SetupUsageError), match="--split"):
        _environments(requirements, name, True, None, as_json)


def test_the_cli_refuses_split_with_a_name() -> None:
    done = gpuenv("setup", "--split", "torch", "jax", "--name", "x", "--dry-run")
    assert done.returncode == 2 and "--split" in done.stderr and "Traceback" not in done.stderr
