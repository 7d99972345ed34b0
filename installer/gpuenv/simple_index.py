"""Reading a package index's simple API (PEP 691 JSON, PEP 503 HTML, local file:// indexes)
and find-links pages: which files a project has, and where each one is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urljoin, urlsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
_HREF = re.compile(r'href="([^"]+)"', re.I)
_CANONICAL = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")  # a canonical project name


def project_files(index_url: str, project: str, timeout: float = 30.0) -> dict[str, str]:
    """file name -> absolute URL of every file the index lists for the project.

    Raises FileNotFoundError when the index does not have the project, and the requests
    exceptions (ConnectionError, Timeout, HTTPError) when it cannot be read.
    """
    name = canonicalize_name(project)
    if not _CANONICAL.fullmatch(name):  # it becomes part of a URL or a path: nothing else
        raise ValueError(f"{project!r} is not a project name")
    if index_url.startswith("file://"):
        return _local(index_url, name)
    import requests  # only look-ups that go online need it

    if index_url.endswith(".html"):  # a find-links page, not a simple index: filter it
        page = requests.get(index_url, timeout=timeout)
        page.raise_for_status()
        return {f: u for f, u in _links(page.text, index_url).items() if project_of(f) == name}
    url = f"{index_url.rstrip('/')}/{name}/"
    response = requests.get(url, headers={"Accept": JSON_ACCEPT}, timeout=timeout)
    if response.status_code == 404:
        raise FileNotFoundError(f"{project} is not on {index_url}")
    response.raise_for_status()
    if "json" in response.headers.get("Content-Type", ""):
        return {f["filename"]: urljoin(url, f["url"]) for f in response.json().get("files", [])}
    return _links(response.text, url)


def _links(html: str, base: str) -> dict[str, str]:
    out = {}
    for href in _HREF.findall(html):
        absolute = urljoin(base, href.split("#")[0])
        out[unquote(absolute.rsplit("/", 1)[-1])] = absolute
    return out


def _local(index_url: str, name: str) -> dict[str, str]:
    root = Path(unquote(urlsplit(index_url).path))
    page = root / name / "index.html"
    if page.is_file():
        return _links(page.read_text(encoding="utf-8"), page.as_uri())
    folder = root / name
    if folder.is_dir():
        return {p.name: p.as_uri() for p in sorted(folder.iterdir())}
    raise FileNotFoundError(f"{name} is not in the local index {index_url}")


def project_of(filename: str) -> Optional[str]:
    """The canonical project name of a wheel or sdist file name, None for anything else."""
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        return str(parse_sdist_filename(filename)[0])
    except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
        return None
