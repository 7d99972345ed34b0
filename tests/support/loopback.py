"""A test's HTTP server on loopback: one free port, handler threads that never outlive the test."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Optional


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


@contextmanager
def loopback(handler: Callable[..., Any], tls: Optional[ssl.SSLContext] = None) -> Iterator[str]:
    """Serve `handler` (a request handler class, or a factory of one) on 127.0.0.1; yields its
    base URL, "http://127.0.0.1:PORT/" ("https://..." with a server `tls` context), and stops
    the server on leaving."""
    server = _Server(("127.0.0.1", 0), handler)
    if tls is not None:
        # the handshake in the handler's thread, not the accepting one: a client that stops
        # before its hello would otherwise hold the whole server (and its shutdown)
        server.socket = tls.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
    thread = threading.Thread(target=server.serve_forever, name="loopback", daemon=True)
    thread.start()
    try:
        scheme = "http" if tls is None else "https"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
