"""A hostile package index for `gpuenv recipes verify --artifacts` and the wheel readers, served
on loopback from a thread: pages that link where the test says, and files served plainly (with
ranges) or with a trick (a drip-feed of the body or of the headers, a Content-Length that lies).

The CLI runs in a child process (`verify_cli`) with a timeout, so a reader that hangs fails its
test instead of stalling the suite; the child may set module constants first (a bound made small
enough to trip within a test) and prints its peak memory (`maxrss_mib`).
"""

from __future__ import annotations

import html
import http.server
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import quote, unquote

from loopback import loopback

WHEEL = "tensorflow-2.3.4-cp38-cp38-manylinux2010_x86_64.whl"
DRIP_S = 0.1  # a byte every 100 ms: never a read timeout, and forever for a 64 KiB answer


@dataclass
class Served:
    data: bytes
    trick: str = "plain"  # plain | drip | drip-head | long-length | short-length


@dataclass
class HostileIndex:
    """What the server answers: project pages (`links`: file name -> href) and files by name."""

    pages: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    files: dict[str, Served] = field(default_factory=dict)
    base: str = ""

    @property
    def simple(self) -> str:
        return self.base + "simple/"

    def page(self, project: str, links: Sequence[tuple[str, str]]) -> None:
        self.pages[project] = list(links)

    def file(self, name: str, data: bytes, trick: str = "plain") -> str:
        """Serve `data` as /files/<name>; the URL it is at."""
        self.files[name] = Served(data, trick)
        return f"{self.base}files/{quote(name)}"


class _Handler(http.server.BaseHTTPRequestHandler):
    index: HostileIndex
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        with suppress(OSError):
            self._answer()

    def _answer(self) -> None:
        parts = [unquote(p) for p in self.path.split("?")[0].strip("/").split("/")]
        if parts[0] == "simple" and len(parts) == 2 and parts[1] in self.index.pages:
            anchors = "".join(
                f'<a href="{html.escape(href)}">{html.escape(name)}</a>\n'
                for name, href in self.index.pages[parts[1]]
            )
            return self._send(200, f"<html><body>\n{anchors}</body></html>\n".encode())
        if parts[0] == "files" and len(parts) == 2 and parts[1] in self.index.files:
            return self._file(self.index.files[parts[1]])
        self._send(404, b"not here")

    def _send(self, status: int, body: bytes, length: Optional[int] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def _file(self, served: Served) -> None:
        data, trick = served.data, served.trick
        if trick == "drip-head":
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 60_000:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(DRIP_S)
            return
        status, body = 200, data
        spec = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        if spec:
            first, last = spec.groups()
            if not first:
                start, end = max(0, len(data) - int(last)), len(data) - 1
            else:
                start, end = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
            status, body = 206, data[start : end + 1]
        if trick == "drip":
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(DRIP_S)
            return
        if trick == "long-length":  # announces more than it sends, then hangs up
            return self._send(status, body, len(body) + 1000)
        if trick == "short-length":  # announces less than it sends
            return self._send(status, body, max(0, len(body) // 2))
        self._send(status, body)


@contextmanager
def serve(index: HostileIndex) -> Iterator[HostileIndex]:
    """Serve `index` on 127.0.0.1 for the `with` block; its `base` is set to the server's URL."""

    class Handler(_Handler):
        pass

    Handler.index = index
    with loopback(Handler) as url:
        index.base = url
        yield index


_CHILD = """
import atexit, importlib, sys
for module, name, value in {patches!r}:
    setattr(importlib.import_module(module), name, value)
try:
    import resource
    atexit.register(lambda: print(
        "maxrss_mib=%d" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024),
        file=sys.stderr,
    ))
except ImportError:  # Windows
    pass
from gpuenv.cli import main
main({argv!r})
"""


def gpuenv_child(
    argv: Sequence[str],
    patches: Sequence[tuple[str, str, object]] = (),
    timeout: float = 60,
    env: Optional[dict[str, str]] = None,
) -> subprocess.CompletedProcess[str]:
    """gpuenv ARGV in a child process, after setting each (module, name, value) of `patches`;
    a child still running after `timeout` seconds is killed and the test fails."""
    code = _CHILD.format(patches=list(patches), argv=list(argv))
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def verify_cli(
    *args: str, patches: Sequence[tuple[str, str, object]] = (), timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return gpuenv_child(["recipes", "verify", "--artifacts", *args], patches, timeout)


def maxrss_mib(stderr: str) -> int:
    found = re.findall(r"maxrss_mib=(\d+)", stderr)
    return int(found[-1]) if found else -1
