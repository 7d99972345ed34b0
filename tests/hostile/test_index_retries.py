"""Index pages are retried on transient failures only: a host name that does not exist is
answered at once (every lock that probes an index while offline would otherwise wait out the
backoff), a temporary resolver failure is retried like a dropped connection."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import requests
from urllib3.exceptions import MaxRetryError, NameResolutionError

from gpuenv.index import simple as simple_index

URL = "https://index.example.invalid/simple"


def _resolver_failure(errno: int) -> requests.ConnectionError:
    """The chain requests raises for a failed name look-up: its ConnectionError, raised while
    handling urllib3's MaxRetryError, caused by NameResolutionError, caused by the resolver's
    gaierror."""
    gai = socket.gaierror(errno, "resolver says no")
    resolution = NameResolutionError("index.example.invalid", None, gai)  # type: ignore[arg-type]
    resolution.__cause__ = gai
    retries = MaxRetryError(None, URL, resolution)  # type: ignore[arg-type]
    retries.__cause__ = resolution
    error = requests.ConnectionError(retries)
    error.__context__ = retries
    return error


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(simple_index, "BACKOFF_S", 0.001)
    return []


def _failing_get(calls: list[str], error: BaseException) -> Any:
    def get(url: str, **_: Any) -> Any:
        calls.append(url)
        raise error

    return get


def test_an_unknown_host_is_asked_once(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    error = _resolver_failure(socket.EAI_NONAME)
    monkeypatch.setattr(requests, "get", _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert calls == [f"{URL}/jax/"]


def test_a_temporary_resolver_failure_is_retried(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = _resolver_failure(socket.EAI_AGAIN)
    monkeypatch.setattr(requests, "get", _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == simple_index.ATTEMPTS


def test_a_dropped_connection_is_retried(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    error = requests.ConnectionError(ConnectionResetError(104, "Connection reset by peer"))
    monkeypatch.setattr(requests, "get", _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == simple_index.ATTEMPTS


def test_an_unknown_host_of_a_find_links_page_is_asked_once(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = "https://releases.example.invalid/jax_cuda_releases.html"
    error = _resolver_failure(socket.EAI_NONAME)
    monkeypatch.setattr(requests, "get", _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(page, "jaxlib", timeout=1)
    assert calls == [page]
