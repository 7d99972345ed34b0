"""Hostile-input tests (the threat-model suite, `pytest -m hostile`): crafted lockfiles and
outputs, local repositories, a private store that trusts nothing."""

from __future__ import annotations

import pytest

from store_fixtures import hostile_store, install_repos

__all__ = ["hostile_store", "install_repos"]


@pytest.fixture(autouse=True)
def offline_uv() -> None:
    """The lock tests' own isolation (tests/lock/conftest.py) gives way to hostile_store."""
