"""The fixtures that give a test local repositories and a private store, shared by the test
folders that install (conftest.py files import them by name: pytest finds them there).

- install_repos: the stand-in packages' index and channel, built once per session per folder
- private_store: a store and caches of the test's own, the local repositories trusted
- hostile_store: the same isolation without trusting them (the threat-model suite asks where
  a lockfile's files come from, so nothing is trusted for it)
- fresh_early_python: envs.early_python's program state cleared before, its search stopped
  after (the tests that play the `gpuenv` program's install)
"""

from __future__ import annotations

from collections.abc import Iterator
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


@pytest.fixture(autouse=True, name="private_store")
def hostile_store(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)


@pytest.fixture
def fresh_early_python(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from gpuenv.envs import early_python

    for name in ("_early", "_asked", "_found"):
        monkeypatch.setattr(early_python, name, None)
    monkeypatch.setattr(early_python, "_program", False)
    yield
    early_python.cancel_unclaimed()
