"""Exports read lockfiles made from local repositories and environments of a private store."""

from store_fixtures import install_repos, private_store

__all__ = ["install_repos", "private_store"]
