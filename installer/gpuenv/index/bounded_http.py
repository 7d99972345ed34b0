"""One HTTP GET whose whole answer arrives before a deadline: connection, status line, headers
and body.

requests' `timeout` bounds each wait for the socket, not the answer: a server that sends a byte
a second (of its body, or of its status line and headers, which http.client reads a line at a
time) never trips it and holds the caller for days. Here a worker thread does the exchange and
hands the body over in chunks through a small queue; the caller waits on the queue only until
the deadline, then gives up, tells the worker to stop and shuts its socket down. A worker stuck
before it has a socket to shut (a status line dripping in) is left behind: it is a daemon
thread, holds at most what http.client reads for headers (lines of 64 KiB, 100 of them), and
ends when the server hangs up or the process does.

Whatever the server sends, the caller sees bytes or an OSError: `TooSlow`, requests' own
exceptions until the headers are in, `BrokenBody` for a body that breaks off or does not decode
(a Content-Length longer than the body: urllib3's IncompleteRead).
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, Optional

CHUNK = 1 << 20
_QUEUED = 4  # chunks in flight between the worker and the caller: memory is 4 x CHUNK
_PUT_WAIT_S = 0.25  # how often a worker blocked on a full queue looks whether to stop


class TooSlow(TimeoutError):
    """The answer did not arrive whole before the deadline."""


class BrokenBody(OSError):
    """The body broke off before its announced end, or could not be decoded."""


class Answer:
    """The status and headers of an answer whose body `chunks` yields within the deadline."""

    def __init__(self, exchange: _Exchange, response: Any) -> None:
        self._exchange = exchange
        self.status_code: int = response.status_code
        self.headers: Mapping[str, str] = response.headers
        self.encoding: str = response.encoding or ""

    def chunks(self) -> Iterator[bytes]:
        """The body, chunk by chunk as it arrives (decoded when the exchange decodes)."""
        while True:
            kind, value = self._exchange.take()
            if kind == "end":
                return
            yield value

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            import requests

            raise requests.HTTPError(f"HTTP {self.status_code} for {self._exchange.url}")


class _Exchange:
    def __init__(
        self, url: str, headers: Mapping[str, str], deadline: float, timeout: float, decode: bool
    ) -> None:
        self.url = url
        self.deadline = deadline
        self._headers = dict(headers)
        self._timeout = timeout
        self._decode = decode
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=_QUEUED)
        self._stop = threading.Event()
        self._response: Optional[Any] = None
        self._thread = threading.Thread(target=self._run, name="gpuenv-http", daemon=True)
        self._thread.start()

    def take(self) -> tuple[str, Any]:
        """The worker's next item; its exception raised here; TooSlow at the deadline."""
        left = self.deadline - time.monotonic()
        try:
            if left <= 0:
                raise queue.Empty
            kind, value = self._queue.get(timeout=left)
        except queue.Empty:
            self.stop()
            raise TooSlow("the answer did not arrive whole before the deadline") from None
        if kind == "error":
            raise value
        return kind, value

    def stop(self) -> None:
        """Tell the worker to stop, and wake it if it waits on the socket."""
        self._stop.set()
        response = self._response
        if response is not None:
            _shut_down(response)

    def _run(self) -> None:
        left = max(0.001, self.deadline - time.monotonic())
        wait = min(self._timeout, left)
        try:
            response = _session().get(
                self.url, headers=self._headers, timeout=(wait, wait), stream=True
            )
        except BaseException as exc:  # handed to the caller, raised there
            self._put(("error", exc))
            return
        self._response = response
        try:
            if not self._put(("head", response)):
                return
            raw = response.raw
            read = getattr(raw, "read1", None) or raw.read  # urllib3 1.x has no read1
            while not self._stop.is_set():
                chunk = read(CHUNK, decode_content=self._decode)
                if not chunk:
                    self._put(("end", b""))
                    return
                if not self._put(("data", chunk)):
                    return
        except Exception as exc:  # urllib3's ProtocolError, DecodeError, a reset socket...
            error = BrokenBody(f"{self.url}: the answer broke off ({exc})")
            error.__cause__ = exc
            self._put(("error", error))
        finally:
            with suppress(Exception):
                response.close()

    def _put(self, item: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_PUT_WAIT_S)
                return True
            except queue.Full:
                continue
        return False


_SESSION: Any = None
_SESSION_LOCK = threading.Lock()


def _session() -> Any:
    """One requests session for every exchange of the run: its connections are kept and reused
    (a lock reads three ranges of each wheel it checks, and an index page per project: a new
    TLS connection for each cost most of a cold lock's time), and its connections share one
    parse of the CA bundle (index.shared_trust). It keeps no cookies: each request carries what
    a fresh one would."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            import http.cookiejar

            import requests  # lazily: not on the CLI start-up path

            from gpuenv.index.shared_trust import SharedTrustAdapter

            session = requests.Session()
            session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            adapter = SharedTrustAdapter(pool_connections=8, pool_maxsize=16)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
            _SESSION = session
        return _SESSION


def _shut_down(response: Any) -> None:
    """Shut the socket under a requests response down, so a read blocked on it returns."""
    for path in (("raw", "_connection", "sock"), ("raw", "_fp", "fp", "raw", "_sock")):
        found: Any = response
        for name in path:
            found = getattr(found, name, None)
        if isinstance(found, socket.socket):
            with suppress(OSError):
                found.shutdown(socket.SHUT_RDWR)
            return


@contextmanager
def get(
    url: str,
    headers: Mapping[str, str],
    *,
    deadline: float,
    timeout: float,
    decode: bool = True,
) -> Iterator[Answer]:
    """GET `url`; the answer's status, headers and every chunk of its body must arrive before
    `deadline` (time.monotonic()), each wait for the socket at most `timeout` seconds. Leaving
    the block stops the exchange, whether or not the body was read to its end."""
    exchange = _Exchange(url, headers, deadline, timeout, decode)
    try:
        _, response = exchange.take()
        yield Answer(exchange, response)
    finally:
        exchange.stop()
