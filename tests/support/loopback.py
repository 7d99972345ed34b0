"""A test's HTTP server on loopback: one free port, handler threads that never outlive the test."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


@contextmanager
def loopback(handler: Callable[..., Any]) -> Iterator[str]:
    """Serve `handler` (a request handler class, or a factory of one) on 127.0.0.1; yields its
    base URL, "http://127.0.0.1:PORT/", and stops the server on leaving."""
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="loopback", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
