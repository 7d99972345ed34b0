"""When a URL is "under" a location (an index, a find-links folder or page, a conda channel):
the one comparison the lockfile-origin rule (gpuenv.envs.origins) and the lock's own check of
uv's answer (gpuenv.lock.portability) make.

A URL is under a location when both are http, https or file URLs and their scheme, host and
port are equal (scheme and host compared without case, a trailing dot of the host ignored, the
default port of the scheme written or not, `localhost` or nothing as a file URL's host), and the
location's path segments begin the URL's path segments. Segments are compared after
percent-decoding each one on its own, so `%73imple` is `simple` but an encoded `/` is never a
separator. A path segment that is `.` or `..` (written or encoded), a segment that decodes to a
`/` or `\\`, an unreadable port, or a URL that is not http(s) or file, is under nothing: such a
URL is refused, whatever it names. The user name and password of either URL are not compared:
`https://idx.example@evil.example/x.whl` is on evil.example. A location that names a page
(`.../jax_cuda_releases.html`) covers the folder the page is in, the files it links beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote, urldefrag, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PAGE_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class UrlParts:
    """A URL as the origin rule compares it."""

    scheme: str
    host: str
    port: Optional[int]
    segments: tuple[str, ...]  # decoded, the first one "" (the path's leading /)
    query: str

    @property
    def origin(self) -> tuple[str, str, Optional[int]]:
        return self.scheme, self.host, self.port


def url_parts(url: str) -> Optional[UrlParts]:
    """`url` normalised for comparison; None when it cannot be under anything."""
    try:
        parts = urlsplit(urldefrag(url.strip()).url)
        scheme = parts.scheme.lower()
        port = parts.port
    except ValueError:  # an unreadable port or host ([::1)
        return None
    if scheme not in ("http", "https", "file"):
        return None
    host = (parts.hostname or "").rstrip(".")
    if scheme == "file":
        if host not in ("", "localhost"):
            return None  # a file on another machine's share: not a location gpuenv reads
        host = ""
    elif not host:
        return None
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    segments = []
    for raw in (parts.path or "/").split("/"):
        segment = unquote(raw)
        if segment in (".", "..") or "/" in segment or "\\" in segment:
            return None
        segments.append(segment)
    if segments[0] != "":
        segments.insert(0, "")  # a path written without its leading /
    return UrlParts(scheme, host, port, tuple(segments), parts.query)


def location_folder(location: str) -> Optional[UrlParts]:
    """The folder a location covers: itself, or for a page the folder the page is in."""
    parts = url_parts(location)
    if parts is None:
        return None
    segments = parts.segments
    if segments[-1].lower().endswith(_PAGE_SUFFIXES):
        segments = segments[:-1]
    elif len(segments) > 1 and segments[-1] == "":
        segments = segments[:-1]  # a trailing slash
    return UrlParts(parts.scheme, parts.host, parts.port, segments, "")


def is_under(url: str, location: str) -> bool:
    """Whether `url` names a file inside `location` (see the module's docstring)."""
    target, base = url_parts(url), location_folder(location)
    if target is None or base is None or target.origin != base.origin:
        return False
    n = len(base.segments)
    return len(target.segments) > n and target.segments[:n] == base.segments


def under_any(url: str, locations: tuple[str, ...]) -> Optional[str]:
    """The first of `locations` that `url` is under, or None."""
    return next((loc for loc in locations if is_under(url, loc)), None)


def same_url(a: str, b: str) -> bool:
    """Whether two URLs name the same file (compared as the rule compares them, query
    included, fragments and credentials ignored)."""
    pa, pb = url_parts(a), url_parts(b)
    return pa is not None and pa == pb


def has_credentials(url: str) -> bool:
    """Whether `url` carries a user name or password."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return "@" in parts.netloc


def carries_secret(url: str) -> bool:
    """Whether `url` carries what may be a secret, never to be written to a file: user info, or
    a query (`?token=`, a signed URL's signature; gpuenv.output.redact says why every value)."""
    try:
        return has_credentials(url) or bool(urlsplit(url).query)
    except ValueError:
        return True  # unreadable: assume the worst


def with_credentials(url: str, locations: Iterable[str]) -> str:
    """`url` with the user name and password of the first location that has some and the same
    scheme, host and port (the realm pip and uv send an index's credentials to); `url` as it
    is when it has its own, or no location matches."""
    if has_credentials(url):
        return url
    target = url_parts(url)
    if target is None:
        return url
    for location in locations:
        if not has_credentials(location):
            continue
        base = url_parts(location)
        if base is not None and base.origin == target.origin:
            userinfo = urlsplit(location).netloc.rpartition("@")[0]
            parts = urlsplit(url)
            return urlunsplit(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))
    return url
