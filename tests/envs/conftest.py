"""Install tests run against local repositories, with a private store and caches."""

from store_fixtures import install_repos, private_store

__all__ = ["install_repos", "private_store"]
