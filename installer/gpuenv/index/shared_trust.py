"""The HTTP session's transport: each CA bundle is read once per run, not once per connection.

requests hands urllib3 the path of the CA bundle it verifies with (certifi's, or
REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE), and urllib3 parses that file again for every new TLS
connection: 16-22 ms of CPU each. A cold lock opens six or more connections at once to read the
locked wheels' RECORDs, and on two cores those parses were most of that step. Here requests
still chooses and checks the bundle (its rules, its errors); a connection, once its socket is
up, takes the run's one context for that bundle instead of parsing it (a host that never
answers costs no parse). Verification is unchanged: the certificate must chain to that bundle
and name the host. Connections through a proxy, and those that present a client certificate,
are left to requests and urllib3 as they are: a proxy's own TLS reads the same settings.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPSConnection

_CONTEXTS: dict[tuple[Optional[str], Optional[str]], Any] = {}
_LOCK = threading.Lock()


def _context(ca_file: Optional[str], ca_dir: Optional[str]) -> Any:
    """One verifying SSL context per bundle location, made as urllib3 makes its own."""
    import ssl

    from urllib3.util.ssl_ import create_urllib3_context

    with _LOCK:  # connections opened side by side wait for one parse, not one each
        context = _CONTEXTS.get((ca_file, ca_dir))
        if context is None:
            context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
            context.load_verify_locations(cafile=ca_file, capath=ca_dir)
            _CONTEXTS[(ca_file, ca_dir)] = context
        return context


class SharedTrustConnection(HTTPSConnection):
    """An HTTPS connection that verifies with the run's context for its bundle."""

    def _new_conn(self) -> Any:
        sock = super()._new_conn()  # the socket first: a host that never answers parses nothing
        where = (self.ca_certs, self.ca_cert_dir)
        if (
            any(where)
            and self.ssl_context is None
            and getattr(self, "proxy", None) is None
            and getattr(self, "cert_file", None) is None
        ):
            self.ssl_context = _context(*where)
            self.ca_certs = self.ca_cert_dir = None
        return sock


class SharedTrustAdapter(HTTPAdapter):
    """An HTTPAdapter whose HTTPS pools open SharedTrustConnections."""

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        super().cert_verify(conn, url, verify, cert)  # type: ignore[no-untyped-call]
        if getattr(conn, "ConnectionCls", None) is HTTPSConnection:
            conn.ConnectionCls = SharedTrustConnection
