"""Credentials in index URLs are never printed or stored.

Private indexes are often configured as `https://user:token@host/simple` (pip's and uv's own
syntax), and signed or token URLs carry the secret in their query (`?token=`, `?access_token=`,
`?sig=`, `?X-Amz-Signature=`, a bare `?<token>`). gpuenv needs the full URL to talk to the
index, and uv gets it as given; everything gpuenv prints (messages, --json, -v command lines,
uv's own error text passed on) or stores (the probe cache) goes through `redact_url` /
`redact_text`, which replace the user-info part with `***` and every query value with `***`
(every one, not only those whose name suggests a secret: a name proves nothing). Parameter
names, hosts and paths stay, so a message still says which index it means.
"""

from __future__ import annotations

import re

MASK = "***"

# scheme://userinfo@ : userinfo is everything up to the last @ before the host's end (a token may
# itself hold a literal @ pip would accept); a `/`, whitespace or a quote ends the authority.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*)@")
# a URL in running text: it ends at whitespace, a quote, an angle bracket or a backtick; or a
# path with a query, as an HTTP library names what it asked for (`with url: /simple/?token=x`)
_URL = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*|(?<![^\s(:=`'\"])/[^\s?'\"<>`]*\?[^\s'\"<>`]*"
)
# what prose puts right after a URL: kept, not taken for the end of a query value
_TRAILING = ").,;:]}!"


def redact_url(url: str) -> str:
    """`url` with any user name, password and query value replaced by ***."""
    return redact_text(url)


def redact_text(text: str) -> str:
    """`text` with the credentials and query values of every URL in it replaced by ***."""
    if "://" not in text and "?" not in text:
        return text  # the common case, without a regex
    return _URL.sub(lambda m: _redact_one(m.group(0)), text)


def _redact_one(url: str) -> str:
    # every user name and password, a URL inside another's path included (a proxy's address)
    url = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", url)
    head, mark, rest = url.partition("?")
    if not mark:
        return url
    body = rest.rstrip(_TRAILING)
    tail = rest[len(body) :]
    query, hashmark, fragment = body.partition("#")
    return f"{head}?{_redact_query(query)}{hashmark}{fragment}{tail}"


def _redact_query(query: str) -> str:
    """Every value masked; `a=1&b` -> `a=***&***` (a bare part may be the token itself)."""
    out = []
    for part in re.split(r"([&;])", query):
        if part in ("&", ";", ""):
            out.append(part)
        elif "=" in part:
            out.append(part.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(MASK)
    return "".join(out)
