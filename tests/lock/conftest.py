"""Fixtures for lock tests: local repositories, and uv/rattler kept away from user config."""

from __future__ import annotations

import pytest

from stacks import LocalRepos, build_repos


@pytest.fixture(scope="session")
def repos(tmp_path_factory: pytest.TempPathFactory) -> LocalRepos:
    return build_repos(tmp_path_factory.mktemp("repos"))


@pytest.fixture(autouse=True)
def offline_uv(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv and rattler see only the local repositories: no user config, a private cache."""
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "uv-cache"))
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gpuenv-cache"))
    for var in (
        "UV_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_INDEX",
        "UV_EXTRA_INDEX_URL",
        "UV_FIND_LINKS",
    ):
        monkeypatch.delenv(var, raising=False)
