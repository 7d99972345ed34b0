"""Install tests run against local repositories, with a private store and caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos, build_install_repos
from isolation import isolate_store, trust_repos


@pytest.fixture(scope="session")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("install-repos"))


@pytest.fixture(autouse=True)
def private_store(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    install_repos: InstallRepos,
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
    trust_repos(monkeypatch, install_repos)
