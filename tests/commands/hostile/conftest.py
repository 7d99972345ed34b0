"""Hostile-input tests (the threat-model suite, `pytest -m hostile`): crafted lockfiles and
outputs, local repositories, a private store."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos, build_install_repos
from isolation import isolate_store


@pytest.fixture(scope="session")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("install-repos"))


@pytest.fixture(autouse=True)
def private_store(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
