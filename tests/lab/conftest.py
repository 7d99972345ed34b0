"""Lab tests use the install tests' local repositories and a private store."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos
from isolation import isolate_store, only_index
from store_fixtures import install_repos

__all__ = ["install_repos", "private"]


@pytest.fixture(autouse=True)
def private(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    install_repos: InstallRepos,
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
    only_index(monkeypatch, install_repos.index)
