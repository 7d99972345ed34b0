"""Index pages are retried on transient failures only: a host name that does not exist is
answered at once (every lock that probes an index while offline would otherwise wait out the
backoff), a temporary resolver failure is retried like a dropped connection, and a 503 from a
real (loopback) server is retried a bounded number of times while a 404 is not."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
import requests
from urllib3.exceptions import MaxRetryError, NameResolutionError

from gpuenv.index import bounded_http, retry
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


def _serve(monkeypatch: pytest.MonkeyPatch, get: Any) -> None:
    """Every GET of gpuenv's HTTP reader (its one session, gpuenv.index.bounded_http) is `get`."""
    monkeypatch.setattr(bounded_http, "_session", lambda: SimpleNamespace(get=get))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(retry, "BACKOFF_S", 0.001)
    return []


def _failing_get(calls: list[str], error: BaseException) -> Any:
    def get(url: str, **_: Any) -> Any:
        calls.append(url)
        raise error

    return get


def test_an_unknown_host_is_asked_once(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    error = _resolver_failure(socket.EAI_NONAME)
    _serve(monkeypatch, _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert calls == [f"{URL}/jax/"]


def test_a_temporary_resolver_failure_is_retried(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = _resolver_failure(socket.EAI_AGAIN)
    _serve(monkeypatch, _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == retry.ATTEMPTS


def test_a_dropped_connection_is_retried(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    error = requests.ConnectionError(ConnectionResetError(104, "Connection reset by peer"))
    _serve(monkeypatch, _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == retry.ATTEMPTS


def test_a_host_that_failed_every_try_is_not_tried_again_in_the_run(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = requests.ConnectionError(ConnectionRefusedError(111, "Connection refused"))
    _serve(monkeypatch, _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(URL, "jax", timeout=1)
    assert len(calls) == retry.ATTEMPTS
    with pytest.raises(requests.ConnectionError, match=r"Connection refused.*not tried again"):
        simple_index.project_files(URL, "jaxlib", timeout=1)
    assert len(calls) == retry.ATTEMPTS  # jaxlib's page was not asked for
    other = URL.replace("index.example.invalid", "mirror.example.invalid")
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(other, "jaxlib", timeout=1)
    assert len(calls) == 2 * retry.ATTEMPTS  # another host is asked as usual


def test_an_unknown_host_of_a_find_links_page_is_asked_once(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = "https://releases.example.invalid/jax_cuda_releases.html"
    error = _resolver_failure(socket.EAI_NONAME)
    _serve(monkeypatch, _failing_get(calls, error))
    with pytest.raises(requests.ConnectionError):
        simple_index.project_files(page, "jaxlib", timeout=1)
    assert calls == [page]


class _Flaky(http.server.BaseHTTPRequestHandler):
    """Answers 503 to the first `failures` requests of each path, then a PEP 503 page with one
    wheel; 404 for /simple/missing/. Counts every request it gets."""

    failures = 0
    status = 503
    counts: ClassVar[dict[str, int]] = {}

    def do_GET(self) -> None:
        n = self.counts[self.path] = self.counts.get(self.path, 0) + 1
        if self.path.startswith("/simple/missing/"):
            self.send_error(404)
        elif n <= self.failures:
            self.send_error(self.status)
        else:
            body = b'<a href="/files/jax-0.4.30-py3-none-any.whl">jax-0.4.30-py3-none-any.whl</a>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def flaky(calls: list[str]) -> Iterator[Callable[..., tuple[str, dict[str, int]]]]:
    """A loopback index that fails with 503 a given number of times per page, then answers:
    its /simple/ URL, and the requests it counted per path."""
    servers = []

    def start(failures: int, status: int = 503) -> tuple[str, dict[str, int]]:
        counts: ClassVar[dict[str, int]] = {}
        handler = type(
            "Handler", (_Flaky,), {"failures": failures, "counts": counts, "status": status}
        )
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/simple", counts

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_503_is_retried_and_the_next_answer_counts(
    flaky: Callable[[int], tuple[str, dict[str, int]]],
) -> None:
    index, counts = flaky(1)
    assert simple_index.project_files(index, "jax", timeout=5) == {
        "jax-0.4.30-py3-none-any.whl": f"{index[: -len('/simple')]}/files/jax-0.4.30-py3-none-any.whl"
    }
    assert counts == {"/simple/jax/": 2}


@pytest.mark.parametrize(("status", "asked"), [(429, 2), (502, 2), (403, 1)])
def test_the_index_and_the_downloads_share_one_retry_policy(
    flaky: Callable[..., tuple[str, dict[str, int]]], status: int, asked: int
) -> None:
    """429 (slow down) and 5xx are asked again, a 4xx is not: the same rule as downloads."""
    index, counts = flaky(1, status)
    if asked == 1:
        with pytest.raises(requests.HTTPError, match=str(status)):
            simple_index.project_files(index, "jax", timeout=5)
    else:
        assert "jax-0.4.30-py3-none-any.whl" in simple_index.project_files(index, "jax", timeout=5)
    assert counts == {"/simple/jax/": asked}
    assert retry.transient_status(status) is (asked == 2)


def test_a_lasting_503_is_asked_a_bounded_number_of_times(
    flaky: Callable[[int], tuple[str, dict[str, int]]],
) -> None:
    index, counts = flaky(1000)
    with pytest.raises(requests.HTTPError, match="503"):
        simple_index.project_files(index, "jax", timeout=5)
    assert counts == {"/simple/jax/": retry.ATTEMPTS}


def test_a_404_is_answered_at_once(flaky: Callable[[int], tuple[str, dict[str, int]]]) -> None:
    index, counts = flaky(0)
    with pytest.raises(FileNotFoundError):
        simple_index.project_files(index, "missing", timeout=5)
    assert counts == {"/simple/missing/": 1}


def test_the_lock_probe_rides_out_two_503s(
    flaky: Callable[[int], tuple[str, dict[str, int]]],
) -> None:
    """The index probe before a lock: a 503 that passes is no unreachable source."""
    from gpuenv.lock.availability import _fetch

    index, counts = flaky(2)
    assert _fetch(index, "jax") == ["jax-0.4.30-py3-none-any.whl"]
    assert counts == {"/simple/jax/": 3}
