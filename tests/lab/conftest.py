"""Lab tests use the install tests' local repositories and a private store."""

from __future__ import annotations

from pathlib import Path

import pytest

from installrepos import InstallRepos, build_install_repos
from isolation import isolate


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
    isolate(
        monkeypatch,
        gpuenv_root=tmp_path / "cache",
        uv_cache=tmp_path_factory.getbasetemp() / "uv-cache",
        home=tmp_path / "home",
    )
    # the only index is the local one; no find-links, no mirrors of this machine
    monkeypatch.setenv("PIP_INDEX_URL", install_repos.index)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
