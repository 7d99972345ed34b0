"""Fixtures for lock tests: local repositories, and uv/rattler kept away from user config."""

from __future__ import annotations

import pytest

from isolation import isolate
from stacks import LocalRepos, build_repos


@pytest.fixture(scope="session")
def repos(tmp_path_factory: pytest.TempPathFactory) -> LocalRepos:
    return build_repos(tmp_path_factory.mktemp("repos"))


@pytest.fixture(autouse=True)
def offline_uv(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv and rattler see only the local repositories: no user config, a private cache."""
    base = tmp_path_factory.getbasetemp()
    isolate(monkeypatch, gpuenv_root=base / "gpuenv-cache", uv_cache=base / "uv-cache")
