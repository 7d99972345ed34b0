"""The probe's short-lived cache of index listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv.lock.availability import _is_missing_project
from gpuenv.lock.probe_cache import PROBE_TTL, ProjectMissing, _path, cached_filenames
from gpuenv.recipes.online import fetch_filenames
from localrepos import build_simple_index, build_wheel, serve_directory

INDEX = "https://mirror.example/simple/"


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


class Index:
    """A fake fetch that counts its calls and answers, misses or fails as told."""

    def __init__(self, answer: list[str] | Exception) -> None:
        self.answer = answer
        self.calls = 0

    def __call__(self, index: str, project: str) -> list[str]:
        self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUENV_PROBE_TTL", raising=False)
    return tmp_path / "cache"


def get(fetch: Index, clock: Clock, index: str = INDEX, project: str = "torch") -> list[str]:
    return cached_filenames(index, project, fetch, _is_missing_project, now=clock)


def test_answers_from_the_cache_until_it_is_too_old() -> None:
    clock, fetch = Clock(), Index(["torch-2.7.1-cp311-cp311-linux_x86_64.whl"])
    assert get(fetch, clock) == fetch.answer
    clock.t += PROBE_TTL - 1
    assert get(fetch, clock) == fetch.answer
    assert fetch.calls == 1
    clock.t += 2
    fetch.answer = ["torch-2.8.0-cp311-cp311-linux_x86_64.whl"]
    assert get(fetch, clock) == fetch.answer
    assert fetch.calls == 2


def test_keyed_by_index_and_project() -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    get(fetch, clock)
    get(fetch, clock, index="https://other.example/simple/")
    get(fetch, clock, project="jax")
    assert fetch.calls == 3


def test_failures_are_not_cached() -> None:
    clock, fetch = Clock(), Index(ConnectionError("refused"))
    for _ in range(2):
        with pytest.raises(ConnectionError):
            get(fetch, clock)
    assert fetch.calls == 2


def test_a_missing_project_is_remembered_as_missing() -> None:
    clock, fetch = Clock(), Index(FileNotFoundError("404"))
    with pytest.raises(FileNotFoundError):
        get(fetch, clock)
    with pytest.raises(ProjectMissing):
        get(fetch, clock)
    assert fetch.calls == 1
    assert _is_missing_project(ProjectMissing("x"))


def test_local_indexes_and_ttl_zero_are_never_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    get(fetch, clock, index="file:///srv/simple/")
    get(fetch, clock, index="file:///srv/simple/")
    assert fetch.calls == 2
    monkeypatch.setenv("GPUENV_PROBE_TTL", "0")
    get(fetch, clock)
    get(fetch, clock)
    assert fetch.calls == 4


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[1, 2]",
        json.dumps({"index": INDEX, "project": "torch", "time": 1e6, "files": [1, 2]}).encode(),
        json.dumps({"index": INDEX, "project": "torch", "time": "now", "files": []}).encode(),
        json.dumps({"index": INDEX, "project": "torch", "time": 2e6, "files": []}).encode(),
        json.dumps({"index": "https://x/", "project": "torch", "time": 1e6, "files": []}).encode(),
    ],
    ids=["garbage", "wrong-type", "bad-files", "bad-time", "from-the-future", "other-index"],
)
def test_a_damaged_cache_entry_is_ignored(content: bytes) -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    path = _path(INDEX, "torch")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert fetch.calls == 1


def test_an_unwritable_cache_only_costs_a_fetch(cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the cache folder should be")
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert fetch.calls == 2


def test_a_real_http_index_is_answered_from_cache_once_gone(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheels", "torch", "2.7.1")
    build_simple_index(tmp_path / "served", [wheel])
    clock = Clock()

    def fetch(index: str, project: str) -> list[str]:
        return fetch_filenames(index, project, timeout=5)

    with serve_directory(tmp_path / "served") as base:
        url = base + "simple/"
        first = cached_filenames(url, "torch", fetch, _is_missing_project, now=clock)
    assert first == [wheel.name]
    # the server is gone: a fresh cached answer still comes back, without a request
    assert cached_filenames(url, "torch", fetch, _is_missing_project, now=clock) == first
