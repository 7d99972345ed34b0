"""Lab tests use the install tests' local repositories and a private store."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos, build_install_repos
from isolation import isolate_store, only_index


@pytest.fixture(scope="session")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("lab-repos"))


@pytest.fixture(autouse=True)
def private(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    install_repos: InstallRepos,
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
    only_index(monkeypatch, install_repos.index)
