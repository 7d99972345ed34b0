"""An index page is read within a total time and a size bound.

Hostile round three: a slow-loris index (a byte every few seconds: requests' timeout bounds each
read, not the answer) or a 400 MB page kept `lock` and `recipes check --online` running past
150 s at 5 GB of memory. Each test serves such an index from a local thread.
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest
import requests

from gpuenv.index import retry, simple
from loopback import loopback

PAGE = b'<a href="jax-0.4.30-py3-none-any.whl">jax-0.4.30-py3-none-any.whl</a>\n'


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    with loopback(handler) as url:
        yield url + "simple/"


class _Trickle(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        try:
            for _ in range(10_000):  # one byte every 50 ms: never a read timeout
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    def log_message(self, *_: object) -> None:
        pass


class _Huge(http.server.BaseHTTPRequestHandler):
    compressed = False

    def do_GET(self) -> None:
        body = PAGE + b" " * (3 << 20)
        if self.compressed:
            body = gzip.compress(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.compressed:
            self.send_header("Content-Encoding", "gzip")
        else:
            self.send_header("Connection", "close")  # no length: only the bytes tell
        self.end_headers()
        with suppress(OSError):
            self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


class _HugeGzip(_Huge):
    compressed = True


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simple, "TOTAL_TIMEOUT_S", 1.5)
    monkeypatch.setattr(retry, "BACKOFF_S", 0.01)
    monkeypatch.setattr(retry, "ATTEMPTS", 1)


def test_a_slow_loris_index_is_given_up_on_in_bounded_time(fast: None) -> None:
    with serving(_Trickle) as url:
        started = time.monotonic()
        with pytest.raises(requests.Timeout, match="did not arrive whole"):
            simple.project_files(url, "jax", timeout=10)
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("handler", [_Huge, _HugeGzip], ids=["plain", "gzip-bomb"])
def test_a_page_over_the_cap_is_refused(
    handler: type[http.server.BaseHTTPRequestHandler], fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(simple, "MAX_PAGE_BYTES", 1 << 20)
    with serving(handler) as url, pytest.raises(simple.PageTooLarge, match="larger than 1 MiB"):
        simple.project_files(url, "jax")
    monkeypatch.setattr(simple, "MAX_PAGE_BYTES", 8 << 20)  # the control: under the cap it reads
    with serving(handler) as url:
        assert list(simple.project_files(url, "jax")) == ["jax-0.4.30-py3-none-any.whl"]


class _DeepJson(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def test_deeply_nested_index_json_is_a_value_error_not_a_crash(fast: None) -> None:
    with serving(_DeepJson) as url, pytest.raises(ValueError, match="nested too deeply"):
        simple.project_files(url, "jax")


class _DripHead(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        with suppress(OSError):
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 600:  # 30 s of a header
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)

    def log_message(self, *_: object) -> None:
        pass


def _within(seconds: float, call):  # type: ignore[no-untyped-def]
    """call()'s result or exception, or a test failure when it is still running after
    `seconds` (it is left behind on a daemon thread)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


def test_an_index_that_drips_its_headers_is_given_up_on_in_bounded_time(fast: None) -> None:
    # hostile round four: requests' timeout bounds each wait for the socket; a status line and
    # headers sent a byte at a time never trip it
    with serving(_DripHead) as url:
        started = time.monotonic()
        with pytest.raises(requests.Timeout, match="did not arrive whole"):
            _within(20, lambda: simple.project_files(url, "jax", timeout=10))
        assert time.monotonic() - started < 5


class _Page(http.server.BaseHTTPRequestHandler):
    body = b""
    content_type = "text/html"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


def test_an_http_index_page_never_links_to_a_local_file(fast: None) -> None:
    class Links(_Page):
        body = (
            b'<a href="file:///etc/passwd#x">jax-0.4.30-py3-none-any.whl</a>\n'
            b'<a href="file:///dev/zero">jax-0.4.31-py3-none-any.whl</a>\n'
            b'<a href="ftp://127.0.0.1/jax-0.4.32-py3-none-any.whl">x</a>\n'
            b'<a href="../../files/jax-0.4.33-py3-none-any.whl">x</a>\n'
        )

    class Json(_Page):
        content_type = "application/vnd.pypi.simple.v1+json"
        body = (
            b'{"files": [{"filename": "jax-0.4.30-py3-none-any.whl", "url": "file:///etc/passwd"},'
            b' {"filename": "jax-0.4.33-py3-none-any.whl", "url": "jax-0.4.33-py3-none-any.whl"}]}'
        )

    for handler in (Links, Json):
        with serving(handler) as url:
            files = simple.project_files(url, "jax")
        assert list(files) == ["jax-0.4.33-py3-none-any.whl"], handler
        assert files["jax-0.4.33-py3-none-any.whl"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",
        b'{"files": {"a": 1}}',
        b'{"files": [1, "x", {"filename": 3}, {"hashes": []}, {"filename": "a", "hashes": 7}]}',
        b'{"files": [{"filename": "jax-0.4.30-py3-none-any.whl", "hashes": {"sha256": 5}}]}',
    ],
)
def test_hashes_from_a_json_page_of_the_wrong_shape_are_none(body: bytes, fast: None) -> None:
    # hostile round four: file_sha256s took `.get` on whatever the JSON held: a traceback
    class Json(_Page):
        content_type = "application/vnd.pypi.simple.v1+json"

    Json.body = body
    with serving(Json) as url:
        assert simple.file_sha256s(url, "jax") == {}
