"""Credentials in index URLs are never printed or stored.

Private indexes are often configured as `https://user:token@host/simple` (pip's and uv's own
syntax). gpuenv needs the full URL to talk to the index, and uv gets it as given; everything
gpuenv prints (messages, --json, -v command lines) or stores (the probe cache) goes through
`redact_url` / `redact_text`, which replace the user-info part with `***`.
"""

from __future__ import annotations

import re

MASK = "***"

# scheme://userinfo@ : userinfo is everything up to the last @ before the host's end (a token may
# itself hold a literal @ pip would accept); a `/`, whitespace or a quote ends the authority.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*)@")


def redact_url(url: str) -> str:
    """`url` with any user name and password replaced by ***."""
    return redact_text(url)


def redact_text(text: str) -> str:
    """`text` with the credentials of every URL in it replaced by ***."""
    if "@" not in text:
        return text  # the common case, without a regex
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
