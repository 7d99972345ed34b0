"""Reading a package index's simple API (PEP 691 JSON, PEP 503 HTML, local file:// indexes)
and find-links pages: which files a project has, and where each one is."""

from __future__ import annotations

import re
import socket
import time
from html import unescape
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urljoin, urlsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from gpuenv.fs.safe_paths import is_sha256

# One page's whole answer, however the server paces it: requests' timeout bounds each read, so
# a server that sends a byte every few seconds (slow loris) would otherwise hold a lock forever.
TOTAL_TIMEOUT_S = 120.0
# PyPI's largest simple pages (torch's JSON, hashes of thousands of files) are a few MB.
MAX_PAGE_BYTES = 64 << 20
JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
_HREF = re.compile(r'href="([^"]+)"', re.I)
_CANONICAL = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")  # a canonical project name


def project_files(index_url: str, project: str, timeout: float = 30.0) -> dict[str, str]:
    """file name -> absolute URL of every file the index lists for the project.

    Raises FileNotFoundError when the index does not have the project, and the requests
    exceptions (ConnectionError, Timeout, HTTPError) when it cannot be read.
    """
    return {name: url for name, (url, _) in project_listing(index_url, project, timeout).items()}


def project_listing(
    index_url: str, project: str, timeout: float = 30.0
) -> dict[str, tuple[str, Optional[str]]]:
    """file name -> (absolute URL, the sha256 the page gives or None) of every file the index
    lists for the project: one page read (project_files' errors)."""
    name = canonicalize_name(project)
    if not _CANONICAL.fullmatch(name):  # it becomes part of a URL or a path: nothing else
        raise ValueError(f"{project!r} is not a project name")
    if index_url.startswith("file://"):
        return _local(index_url, name)
    if index_url.endswith(".html"):  # a find-links page, not a simple index: filter it
        page = _get(index_url, {}, timeout)
        page.raise_for_status()
        return {f: u for f, u in _links(page.text, index_url).items() if project_of(f) == name}
    url = f"{index_url.rstrip('/')}/{name}/"
    response = _get(url, {"Accept": JSON_ACCEPT}, timeout)
    if response.status_code == 404:
        raise FileNotFoundError(f"{project} is not on {index_url}")
    response.raise_for_status()
    if "json" in response.headers.get("Content-Type", ""):
        return _json_files(response, url)
    return _links(response.text, url)


def _json_entries(response: Page, url: str) -> list[dict[str, Any]]:
    """PEP 691's `files`: the entries that are objects (anything else on the page is skipped)."""
    try:
        data = response.json()
    except RecursionError:  # nesting deeper than any index writes
        raise ValueError(
            f"{url}: the index's JSON is nested too deeply to be a PEP 691 page"
        ) from None
    files = data.get("files", []) if isinstance(data, dict) else []
    return [f for f in (files if isinstance(files, list) else []) if isinstance(f, dict)]


def _json_files(response: Page, url: str) -> dict[str, tuple[str, Optional[str]]]:
    """PEP 691's file list; entries that are not {filename, url} strings are skipped."""
    return _followed(
        {
            f["filename"]: (urljoin(url, f["url"]), _json_sha256(f))
            for f in _json_entries(response, url)
            if isinstance(f.get("filename"), str) and isinstance(f.get("url"), str)
        },
        url,
    )


def followable(page_url: str, url: str) -> bool:
    """Whether a link on a page at `page_url` may be followed: from an http(s) page only to
    http(s), so an index on the network never makes gpuenv read a local file (file://)."""
    page = urlsplit(page_url).scheme.lower()
    return page not in ("http", "https") or urlsplit(url).scheme.lower() in ("http", "https")


def _followed(
    files: dict[str, tuple[str, Optional[str]]], page: str
) -> dict[str, tuple[str, Optional[str]]]:
    """The links a page at `page` may lead to (`followable`)."""
    kept = {name: link for name, link in files.items() if followable(page, link[0])}
    if len(kept) < len(files):
        from gpuenv.output import debug, shown
        from gpuenv.output.redact import redact_url

        dropped = sorted(set(files) - set(kept))
        debug(
            f"{redact_url(page)} links {len(dropped)} files to other than http(s), not followed:"
            f" {shown(', '.join(dropped[:5]))}"
        )
    return kept


def _json_sha256(entry: dict[str, Any]) -> Optional[str]:
    hashes = entry.get("hashes")
    digest = hashes.get("sha256") if isinstance(hashes, dict) else None
    return digest.lower() if isinstance(digest, str) and is_sha256(digest.lower()) else None


class PageTooLarge(OSError):
    """An index page over MAX_PAGE_BYTES: not an index page gpuenv will hold in memory."""


class Page:
    """An index's answer, read whole within the time and size bounds."""

    def __init__(self, url: str, status_code: int, headers: Any, content: bytes, encoding: str):
        self.url = url
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.encoding = encoding

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding or "utf-8", errors="replace")

    def json(self) -> Any:
        import json

        return json.loads(self.content)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            import requests

            raise requests.HTTPError(f"HTTP {self.status_code} for {self.url}")


def fetch_filenames(index_url: str, project: str, timeout: float = 30.0) -> list[str]:
    """The file names a simple index (or find-links page) lists for a project."""
    return sorted(project_files(index_url, project, timeout))


_SHA256 = re.compile(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', re.I)


def file_sha256s(index_url: str, project: str, timeout: float = 30.0) -> dict[str, str]:
    """file name -> the sha256 the index publishes for it (PEP 691 `hashes`, or a PEP 503
    `#sha256=` fragment). Files the index gives no sha256 for are left out; a local index
    folder without pages gives none (hash the files themselves)."""
    name = canonicalize_name(project)
    if not _CANONICAL.fullmatch(name):
        raise ValueError(f"{project!r} is not a project name")
    if index_url.startswith("file://"):
        page = Path(unquote(urlsplit(index_url).path)) / name / "index.html"
        text = _read_local_page(page) if page.is_file() else ""
        return {unquote(h.rsplit("/", 1)[-1]): d.lower() for h, d in _SHA256.findall(text)}
    url = f"{index_url.rstrip('/')}/{name}/"
    response = _get(url, {"Accept": JSON_ACCEPT}, timeout)
    if response.status_code == 404:
        raise FileNotFoundError(f"{project} is not on {index_url}")
    response.raise_for_status()
    if "json" in response.headers.get("Content-Type", ""):
        out = {}
        for f in _json_entries(response, url):
            digest = _json_sha256(f)
            if isinstance(f.get("filename"), str) and digest is not None:
                out[f["filename"]] = digest
        return out
    return {unquote(h.rsplit("/", 1)[-1]): d.lower() for h, d in _SHA256.findall(response.text)}


def _get(url: str, headers: dict[str, str], timeout: float) -> Any:
    """A GET retried as gpuenv.index.retry says. The last failure is raised (or the last
    transient answer returned) for the caller."""
    import requests  # only look-ups that go online need it

    from gpuenv.index import retry

    why = retry.given_up(url)
    if why is not None:
        raise requests.ConnectionError(f"{why} (not tried again in this run)")
    tries = retry.attempts()
    for attempt in range(1, tries + 1):
        try:
            response = _bounded_get(url, headers, timeout)
        except (requests.ConnectionError, requests.Timeout) as exc:
            if attempt == tries:
                retry.give_up_on(url, str(exc))
            if attempt == tries or unknown_host(exc):
                raise
        else:
            if not retry.transient_status(response.status_code) or attempt == tries:
                return response
        retry.pause(attempt)
    raise AssertionError("unreachable")


def _bounded_get(url: str, headers: dict[str, str], timeout: float) -> Page:
    """One GET whose whole answer (status line and headers included) arrives within
    TOTAL_TIMEOUT_S and whose body stays within MAX_PAGE_BYTES (counted after decompression, so
    a gzip bomb is cut off too): gpuenv.index.bounded_http."""
    import requests

    from gpuenv.index import bounded_http

    deadline = time.monotonic() + TOTAL_TIMEOUT_S
    try:
        with bounded_http.get(
            url, headers, deadline=deadline, timeout=min(timeout, TOTAL_TIMEOUT_S)
        ) as got:
            declared = got.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > MAX_PAGE_BYTES:
                raise PageTooLarge(_too_large(url))
            chunks: list[bytes] = []
            size = 0
            for chunk in got.chunks():
                size += len(chunk)
                if size > MAX_PAGE_BYTES:
                    raise PageTooLarge(_too_large(url))
                chunks.append(chunk)
            return Page(url, got.status_code, got.headers, b"".join(chunks), got.encoding)
    except bounded_http.TooSlow:
        raise requests.Timeout(
            f"{url}: the page did not arrive whole within {TOTAL_TIMEOUT_S:.0f}s"
        ) from None
    except bounded_http.BrokenBody as exc:  # as requests names a body cut short: retried
        raise requests.ConnectionError(str(exc)) from exc


def _too_large(url: str) -> str:
    return f"{url}: the page is larger than {MAX_PAGE_BYTES >> 20} MiB; not an index page"


def unknown_host(exc: BaseException) -> bool:
    """The name resolver's definite "no such host" somewhere in the chain of causes (requests
    wraps urllib3's error, which wraps the resolver's); a temporary resolver failure is not."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            return cause.errno == socket.EAI_NONAME
        cause = cause.__cause__ or cause.__context__
    return False


def _links(html: str, base: str) -> dict[str, tuple[str, Optional[str]]]:
    out = {}
    for href in _HREF.findall(html):
        link, _, fragment = unescape(href).partition("#")
        absolute = urljoin(base, link)
        digest = fragment[len("sha256=") :] if fragment.lower().startswith("sha256=") else ""
        out[unquote(absolute.rsplit("/", 1)[-1])] = (
            absolute,
            digest.lower() if is_sha256(digest.lower()) else None,
        )
    return _followed(out, base)


def _read_local_page(page: Path) -> str:
    """A local index's page: a regular file of at most MAX_PAGE_BYTES, read without blocking
    (a FIFO or a device put there is refused)."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        return read_bounded(page, MAX_PAGE_BYTES, "index page").decode("utf-8", "replace")
    except UnsafePathError as exc:  # as the network's unreadable pages: an OSError
        raise OSError(str(exc)) from None


def _local(index_url: str, name: str) -> dict[str, tuple[str, Optional[str]]]:
    root = Path(unquote(urlsplit(index_url).path))
    page = root / name / "index.html"
    if page.is_file():
        return _links(_read_local_page(page), page.as_uri())
    folder = root / name
    if folder.is_dir():
        return {p.name: (p.as_uri(), None) for p in sorted(folder.iterdir())}
    raise FileNotFoundError(f"{name} is not in the local index {index_url}")


def project_of(filename: str) -> Optional[str]:
    """The canonical project name of a wheel or sdist file name, None for anything else."""
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        return str(parse_sdist_filename(filename)[0])
    except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
        return None
