"""The HTTP session reads its CA bundle once per run and shares it across connections
(gpuenv.index.shared_trust), and still verifies every connection as requests would: the server
must chain to the bundle and be the host asked for."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest
import requests

from gpuenv.index import bounded_http, shared_trust
from loopback import loopback
from tls import Authority, authority, server_context, server_files

_HOLD_S = 0.3  # each answer waits this long, so reads side by side need connections of their own


class _Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections stay open between requests
    connections: ClassVar[int] = 0

    def setup(self) -> None:
        type(self).connections += 1
        super().setup()

    def do_GET(self) -> None:
        time.sleep(_HOLD_S)
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_http, "_SESSION", None)
    monkeypatch.setattr(shared_trust, "_CONTEXTS", {})
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)


@contextmanager
def serving(folder: Path, ca: Authority, name: str = "127.0.0.1") -> Iterator[tuple[str, type]]:
    handler = type("Handler", (_Slow,), {"connections": 0})
    cert, key = server_files(folder, ca, ip=name)
    with loopback(handler, tls=server_context(cert, key)) as url:
        yield url, handler


def _read(url: str) -> bytes:
    with bounded_http.get(url, {}, deadline=time.monotonic() + 10, timeout=5) as answer:
        return b"".join(answer.chunks())


def _side_by_side(url: str, n: int) -> list[object]:
    """n reads at once: each its answer, or the exception it raised."""
    results: list[object] = [None] * n

    def one(i: int) -> None:
        try:
            results[i] = _read(f"{url}page-{i}")
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    return results


def _trust(monkeypatch: pytest.MonkeyPatch, folder: Path, ca: Authority) -> Path:
    """`ca` as the bundle requests verifies with."""
    bundle = folder / "bundle.pem"
    bundle.write_bytes(ca.pem)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    return bundle


def test_new_connections_reuse_the_bundle_read_at_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = authority()
    bundle = _trust(monkeypatch, tmp_path, ca)
    with serving(tmp_path / "server", ca) as (url, handler):
        assert _read(url) == b"hello"
        # No bundle in its place: a connection that parsed the file again would fail.
        # Connections opened from now on use the run's first parse.
        bundle.write_bytes(b"not a certificate\n")
        assert _side_by_side(url, 3) == [b"hello"] * 3
        assert handler.connections >= 3  # new connections were opened after the change


def test_a_server_the_bundle_does_not_vouch_for_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trusted, stranger = authority(), authority("a stranger")
    _trust(monkeypatch, tmp_path, trusted)
    with serving(tmp_path / "good", trusted) as (good, _):
        assert _read(good) == b"hello"  # the shared context exists from here on
    with serving(tmp_path / "bad", stranger) as (bad, _):
        results = _side_by_side(bad, 2)
    assert all(isinstance(r, requests.exceptions.SSLError) for r in results), results


def test_a_certificate_for_another_host_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = authority()
    _trust(monkeypatch, tmp_path, ca)
    with serving(tmp_path / "good", ca) as (good, _):
        assert _read(good) == b"hello"
    with (
        serving(tmp_path / "other", ca, name="other.invalid") as (url, _),
        pytest.raises(requests.exceptions.SSLError),
    ):
        _read(url)


def test_a_bundle_that_is_not_there_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = authority()
    missing = tmp_path / "no-such-bundle.pem"
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(missing))
    with (
        serving(tmp_path / "server", ca) as (url, _),
        pytest.raises(OSError, match=r"no-such-bundle\.pem"),
    ):
        _read(url)


def test_plain_http_is_left_to_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _trust(monkeypatch, tmp_path, authority())
    handler = type("Handler", (_Slow,), {"connections": 0})
    with loopback(handler) as url:
        assert _side_by_side(url, 2) == [b"hello"] * 2
    assert shared_trust._CONTEXTS == {}  # no bundle was read for it


@pytest.mark.parametrize(
    "setting",
    [
        {"cert_file": "client.pem"},
        {"proxy": "http://proxy.invalid:3128"},
        {"ssl_context": "own"},
    ],
    ids=["client-certificate", "proxy", "own-context"],
)
def test_client_certificates_proxies_and_own_contexts_keep_urllib3s_way(
    tmp_path: Path, setting: dict[str, str]
) -> None:
    """One context per bundle, shared: a client certificate loaded into it would be presented
    on every connection, and a proxy's own TLS reads the bundle's path from the connection. So
    such connections, and one given a context of its own, keep the path, and parse it as
    urllib3 does."""
    import ssl

    from urllib3.util.url import parse_url

    def value(key: str, text: str) -> object:
        if key == "proxy":
            return parse_url(text)
        return ssl.create_default_context() if key == "ssl_context" else text

    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(authority().pem)
    handler = type("Handler", (_Slow,), {"connections": 0})
    with loopback(handler) as url:
        port = parse_url(url).port
        kwargs = {key: value(key, text) for key, text in setting.items()}
        for extra, shared in (({}, True), (kwargs, False)):
            conn = shared_trust.SharedTrustConnection("127.0.0.1", port, **extra)  # type: ignore[arg-type]
            conn.ca_certs = str(bundle)
            conn._new_conn().close()
            ours = shared_trust._CONTEXTS.get((str(bundle), None))
            if shared:
                assert ours is not None and conn.ssl_context is ours
                assert conn.ca_certs is None
            else:
                assert conn.ssl_context is not ours or ours is None
                assert conn.ca_certs == str(bundle)


def test_a_connection_that_verifies_nothing_is_left_as_it_is() -> None:
    """verify=False: no bundle to share, and no context made."""
    from urllib3.util.url import parse_url

    handler = type("Handler", (_Slow,), {"connections": 0})
    with loopback(handler) as url:
        conn = shared_trust.SharedTrustConnection("127.0.0.1", parse_url(url).port)
        conn._new_conn().close()
    assert conn.ssl_context is None
    assert shared_trust._CONTEXTS == {}
