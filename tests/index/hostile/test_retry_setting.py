"""How many times gpuenv's own reads try: uv's UV_HTTP_RETRIES, the one setting for every retry
of a lock or an install (3 retries when unset, as uv's default). A value that is not a count
is refused with the variable named, and the growing pause between tries stops growing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import requests

from gpuenv.index import bounded_http, retry
from gpuenv.index import simple as simple_index

URL = "https://index.example.invalid/simple"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every GET, each a dropped connection (worth another try), with no pause between."""
    monkeypatch.setattr(retry, "BACKOFF_S", 0.0)
    found: list[str] = []

    def get(url: str, **_: Any) -> Any:
        found.append(url)
        raise requests.ConnectionError(ConnectionResetError(104, "Connection reset by peer"))

    monkeypatch.setattr(bounded_http, "_session", lambda: SimpleNamespace(get=get))
    return found


@pytest.mark.parametrize(("value", "tries"), [(None, 4), ("", 4), ("0", 1), ("5", 6), (" 2 ", 3)])
def test_an_index_page_is_tried_as_uv_http_retries_says(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, value: str | None, tries: int
) -> None:
    if value is None:
        monkeypatch.delenv(retry.RETRIES_ENV, raising=False)
    else:
        monkeypatch.setenv(retry.RETRIES_ENV, value)
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == tries


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "1e3", "\u0663", "9999999", "3; rm"])
def test_a_value_that_is_no_count_is_refused_naming_the_variable(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(retry.RETRIES_ENV, value)
    with pytest.raises(retry.RetrySettingError, match="UV_HTTP_RETRIES") as err:
        simple_index.project_files(URL, "jax", timeout=1)
    assert err.value.exit_code == 2
    assert calls == []  # refused before anything was asked


def test_the_pause_between_tries_stops_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    for attempt in (1, 2, 3, 4, 5, 60, 10**6):
        retry.pause(attempt)
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0, retry.MAX_PAUSE_S, retry.MAX_PAUSE_S]
