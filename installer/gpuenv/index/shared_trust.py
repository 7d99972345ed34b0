"""The HTTP session's transport: each CA bundle is read once per run, not once per connection.

requests hands urllib3 the path of the CA bundle it verifies with (certifi's, or
REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE), and urllib3 parses that file again for every new TLS
connection: 16-22 ms of CPU each. A cold lock opens six or more connections at once to read the
locked wheels' RECORDs, and on two cores those parses were most of that step. Here requests
still chooses and checks the bundle (its rules, its errors); the bundle is then loaded once into
one SSL context per location, which every later connection of the run shares. Verification is
unchanged: the certificate must chain to that bundle and name the host.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from requests.adapters import HTTPAdapter

_CONTEXTS: dict[tuple[Optional[str], Optional[str]], Any] = {}
_LOCK = threading.Lock()


def _context(ca_file: Optional[str], ca_dir: Optional[str]) -> Any:
    """One verifying SSL context per bundle location, made as urllib3 makes its own."""
    import ssl

    from urllib3.util.ssl_ import create_urllib3_context

    key = (ca_file, ca_dir)
    context = _CONTEXTS.get(key)
    if context is None:
        context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
        context.load_verify_locations(cafile=ca_file, capath=ca_dir)
        _CONTEXTS[key] = context
    return context


class SharedTrustAdapter(HTTPAdapter):
    """An HTTPAdapter whose verifying pools share one SSL context per CA bundle."""

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        # Once per pool and setting, under one lock: requests sets the bundle's path on the
        # pool at every request, and a thread opening a connection of the pool in between
        # would parse the bundle once more.
        setting = (url.lower().startswith("https"), verify, cert)
        with _LOCK:
            if getattr(conn, "_gpuenv_trust", None) == setting:
                return
            super().cert_verify(conn, url, verify, cert)  # type: ignore[no-untyped-call]
            where = (getattr(conn, "ca_certs", None), getattr(conn, "ca_cert_dir", None))
            kwargs = getattr(conn, "conn_kw", None)
            # requests names a bundle only for a verified https pool; a client certificate
            # is left to requests' own way
            if not cert and any(where) and isinstance(kwargs, dict):
                kwargs["ssl_context"] = _context(*where)
                conn.ca_certs = None
                conn.ca_cert_dir = None
            conn._gpuenv_trust = setting
