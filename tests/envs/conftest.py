"""Install tests run against local repositories, with a private store and caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos, build_install_repos


@pytest.fixture(scope="session")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("install-repos"))


@pytest.fixture(autouse=True)
def private_store(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "uv-cache"))
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
