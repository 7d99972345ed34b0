"""Hostile-input tests (the threat-model suite, `pytest -m hostile`): crafted lockfiles and
outputs, local repositories, a private store that trusts nothing."""

from __future__ import annotations

import pytest

from store_fixtures import hostile_store, install_repos

__all__ = ["hostile_store", "install_repos"]


@pytest.fixture(autouse=True)
def private() -> None:
    """The lab tests' own isolation (tests/lab/conftest.py) gives way to hostile_store."""
