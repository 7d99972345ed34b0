"""gpuenv's HTTP reads share one session (gpuenv.index.bounded_http): connections are kept and
reused, so a lock's many small reads (three ranges per wheel it checks, a page per project) do
not each open a connection; and the session keeps no cookies, so no request carries what an
earlier answer set, as with a fresh connection each time."""

from __future__ import annotations

import http.server
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from gpuenv.index import bounded_http
from loopback import loopback


class _KeepAlive(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections stay open between requests
    connections: ClassVar[int] = 0
    cookies_seen: ClassVar[list[str]] = []

    def setup(self) -> None:
        type(self).connections += 1
        super().setup()

    def do_GET(self) -> None:
        type(self).cookies_seen.append(self.headers.get("Cookie", ""))
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "tracker=abc; Path=/")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def serving() -> Iterator[tuple[str, type[_KeepAlive]]]:
    """A local server and its handler class, whose counters are this server's alone."""
    handler = type("Handler", (_KeepAlive,), {"connections": 0, "cookies_seen": []})
    with loopback(handler) as url:
        yield url, handler


def _read(url: str) -> bytes:
    deadline = time.monotonic() + 10
    with bounded_http.get(url, {}, deadline=deadline, timeout=5) as answer:
        return b"".join(answer.chunks())


def test_reads_reuse_one_connection_and_carry_no_cookie() -> None:
    with serving() as (base, handler):
        for i in range(5):
            assert _read(f"{base}page-{i}") == b"hello"
        assert handler.connections == 1
        assert handler.cookies_seen == [""] * 5
