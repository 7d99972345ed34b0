"""Hostile-input tests (the threat-model suite, `pytest -m hostile`): crafted lockfiles and
outputs, local repositories, a private store that trusts nothing."""

from __future__ import annotations

from store_fixtures import hostile_store, install_repos

__all__ = ["hostile_store", "install_repos"]
