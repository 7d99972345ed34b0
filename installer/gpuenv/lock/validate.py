"""One validator for what both lockfile formats hold: a wheel entry's URL, file name and hash,
and the plan (gpuenv.lock.plan_fields). The conda-lock reader and the pylock reader both call
it, so a rule added here holds for either file (issue 17: the two had drifted apart).

A wheel entry is refused unless its URL is https, http (with a host) or file, or a portable
`index:///<project>/<file>`, its file name is a plain name (no `/`, `\\`, `..`), names a wheel
(never an sdist: no package code runs at install) of the entry's own project, and its sha256 is
64 lower-case hex digits. `fail` makes the reader's own error, naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from gpuenv.fs.safe_paths import is_sha256, plain_name
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.model import PORTABLE_PREFIX

Fail = Callable[[str], LockfileError]

URL_SCHEMES = ("https", "http", "file")
PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar", ".tar.xz")
_URL_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")


def url_file_name(url: str, where: str, fail: Fail) -> str:
    """The plain file name at the end of an https, http or file URL."""
    if _URL_UNSAFE.search(url):
        raise fail(f"{where}.url holds a space, a backslash or a control character")
    parts = urlsplit(url)
    if parts.scheme not in URL_SCHEMES:
        raise fail(f"{where}.url: scheme {parts.scheme!r:.20} is not https, http or file")
    if parts.scheme != "file" and not parts.hostname:
        raise fail(f"{where}.url {url!r:.80} names no host")
    return plain_name(unquote(parts.path.rsplit("/", 1)[-1]), f"{where}.url's file name")


def wheel_file_name(url: str, name: str, where: str, fail: Fail) -> str:
    """The wheel file an entry for project `name` points at, once every rule above holds."""
    if url.startswith(PORTABLE_PREFIX):
        if _URL_UNSAFE.search(url):
            raise fail(f"{where}.url holds a space, a backslash or a control character")
        parts = url[len(PORTABLE_PREFIX) :].split("/")
        if len(parts) != 2 or not PROJECT_NAME.fullmatch(parts[0]):
            raise fail(f"{where}.url: expected {PORTABLE_PREFIX}<project>/<file name>")
        filename = plain_name(unquote(parts[1]), f"{where}.url's file name")
    else:
        filename = url_file_name(url, where, fail)
    if not filename.endswith(".whl"):
        if filename.lower().endswith(_SDIST_SUFFIXES):
            raise fail(
                f"gpuenv installs wheels only: {name} has an sdist URL ({filename}); no"
                " package code runs at install. Lock it again where a wheel exists."
            )
        raise fail(f"{where}.url does not name a wheel (.whl): {filename!r:.80}")
    try:
        project = parse_wheel_filename(filename)[0]
    except InvalidWheelFilename:
        raise fail(f"{where}.url: {filename!r:.80} is not a valid wheel name") from None
    if project != canonicalize_name(name):
        raise fail(f"{where}.url names a wheel of {project}, not of {name}")
    return filename


def check_sha256(value: object, where: str, fail: Fail) -> str:
    if not isinstance(value, str) or not is_sha256(value):
        raise fail(f"{where} is not 64 lowercase hex digits")
    return value
