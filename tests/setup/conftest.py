"""Install tests run against local repositories, with a private store and caches."""

from store_fixtures import fresh_early_python, install_repos, private_store

__all__ = ["fresh_early_python", "install_repos", "private_store"]
