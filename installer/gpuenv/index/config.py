"""The user's package-index configuration: for uv's arguments and for gpuenv's own look-ups.

uv reads its own configuration (uv.toml, `UV_*` variables) by itself. pip's (pip.conf,
`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_FIND_LINKS`, `PIP_NO_INDEX`) it ignores, so a lab
that set up a mirror for pip would silently bypass it: gpuenv carries pip's settings over (read
from pip's files and variables by gpuenv.index.pip_config, without pip), unless the user configured
uv's indexes (`UV_*` index variables, or a user or system uv.toml naming an index), which then win.

With nothing configured, gpuenv passes no index to uv, which uses its default index. gpuenv's own
look-ups (which files an index publishes) need that default's URL too: gpuenv asks uv for it
(uv documents it in its help text) rather than writing a host name into its source.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.index.pip_config import PipConfigError, PipSettings, read_pip_settings

_UV_INDEX_VARS = (
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
)


@dataclass(frozen=True)
class IndexConfig:
    index_url: Optional[str] = None  # None: uv's own default (or its configuration)
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    origin: str = "uv defaults"
    notes: tuple[str, ...] = field(default=())
    no_index: bool = False  # pip's no-index: find-links folders only

    def uv_args(self) -> list[str]:
        args: list[str] = ["--no-index"] if self.no_index else []
        if self.index_url:
            args += ["--default-index", self.index_url]
        for url in self.extra_index_urls:
            args += ["--index", url]
        for link in self.find_links:
            args += ["--find-links", link]
        if self.extra_index_urls:
            # pip picks the best version across all its indexes; uv's default is the first index
            # that has the project. Labs that configured pip that way expect pip's behaviour.
            args += ["--index-strategy", "unsafe-best-match"]
        return args

    def all_indexes(self) -> tuple[str, ...]:
        return ((self.index_url,) if self.index_url else ()) + self.extra_index_urls


def user_index_config(environ: Optional[dict[str, str]] = None) -> IndexConfig:
    env = dict(os.environ if environ is None else environ)
    if any(env.get(var) for var in _UV_INDEX_VARS):
        return IndexConfig(origin="uv environment variables")
    uv_file = _uv_config_with_indexes(env)
    if uv_file:
        return IndexConfig(origin=f"uv configuration ({uv_file[0]})")
    pip = _pip_settings(env)
    where = "pip configuration (" + ", ".join(pip.sources) + ")"
    for key, values in (
        ("index-url", (pip.index_url,) if pip.index_url else ()),
        ("extra-index-url", pip.extra_index_urls),
        ("find-links", pip.find_links),
    ):
        for value in values:
            parseable_url(value, f"{where}, {key}")
    extras = tuple(u for u in pip.extra_index_urls if _usable(u))
    links = tuple(u for u in pip.find_links if _usable(u))
    skipped = [u for u in (*pip.extra_index_urls, *pip.find_links) if not _usable(u)]
    notes = tuple(f"pip setting {u} skipped: the folder does not exist" for u in skipped)
    if not (pip.index_url or extras or links or pip.no_index):
        return IndexConfig(notes=notes)
    return IndexConfig(
        index_url=pip.index_url,
        extra_index_urls=extras,
        find_links=links,
        origin=where,
        notes=notes,
        no_index=pip.no_index,
    )


def _pip_settings(env: dict[str, str]) -> PipSettings:
    try:
        return read_pip_settings(env)
    except PipConfigError as exc:
        raise IndexConfigError(str(exc)) from None


def _uv_config_files(env: dict[str, str]) -> list[str]:
    # uv reads an explicit UV_CONFIG_FILE even under UV_NO_CONFIG, which stops only discovery
    explicit = [env["UV_CONFIG_FILE"]] if env.get("UV_CONFIG_FILE") else []
    if env.get("UV_NO_CONFIG"):
        return explicit
    candidates = [*explicit]
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    candidates += [os.path.join(xdg, "uv", "uv.toml"), "/etc/uv/uv.toml"]
    if sys.platform == "win32" and env.get("APPDATA"):
        candidates.append(os.path.join(env["APPDATA"], "uv", "uv.toml"))
    return [c for c in candidates if c]


MAX_UV_CONFIG_BYTES = 1 << 20  # a uv.toml is a few lines


def _uv_config_with_indexes(env: dict[str, str]) -> Optional[tuple[str, str]]:
    """A uv.toml that sets an index (uv reads it by itself; pip's settings must not override
    it), and its text. Read through the bounded, non-blocking reader: UV_CONFIG_FILE=/dev/zero
    or a FIFO there is a configuration error, not a hang."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    for path in _uv_config_files(env):
        if not os.path.lexists(path):
            continue
        try:
            raw = read_bounded(Path(path), MAX_UV_CONFIG_BYTES, "uv configuration")
        except UnsafePathError as exc:
            if os.path.isfile(path) and not os.access(path, os.R_OK):
                continue  # another user's file uv cannot read either
            raise IndexConfigError(f"{exc}; fix or remove it, or set UV_CONFIG_FILE") from None
        text = raw.decode("utf-8", errors="replace")
        if any(key in text for key in ("index-url", "[[index]]", "find-links", "extra-index-url")):
            return path, text
    return None


def _read_uv_config(env: dict[str, str]) -> Optional[tuple[str, dict[str, Any]]]:
    """The uv.toml that names indexes, parsed; an unreadable one is a configuration error."""
    found = _uv_config_with_indexes(env)
    if found is None:
        return None
    path, text = found
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return path, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise IndexConfigError(f"uv configuration {path} cannot be read: {exc}") from None
    except RecursionError:
        raise IndexConfigError(
            f"uv configuration {path} is nested too deeply to be a uv.toml"
        ) from None


def _uv_default_index(env: dict[str, str]) -> Optional[str]:
    """The default index a uv.toml names (`index-url`, or an `[[index]]` with default = true)."""
    config = _read_uv_config(env)
    if config is None:
        return None
    _path, data = config
    if isinstance(data.get("index-url"), str):
        return str(data["index-url"])
    for entry in data.get("index") or []:
        if isinstance(entry, dict) and entry.get("default") and isinstance(entry.get("url"), str):
            return str(entry["url"])
    return None


@dataclass(frozen=True)
class UvSources:
    """Where uv's own configuration sends uv: its variables, then its uv.toml. uv reads these
    by itself; gpuenv needs them for its own look-ups (portable lockfiles)."""

    indexes: tuple[str, ...] = ()  # in uv's order of priority; the default index not among them
    default_index: Optional[str] = None
    find_links: tuple[str, ...] = ()


def uv_sources(environ: Optional[dict[str, str]] = None) -> UvSources:
    """The indexes and find-links locations uv's variables and configuration file name, each
    checked (gpuenv.index.config.checked_location): a location gpuenv cannot use is refused."""
    env = dict(os.environ if environ is None else environ)
    indexes: list[str] = []
    links: list[str] = []
    default: Optional[str] = None
    config, named = _uv_config(env)
    for var in ("UV_INDEX", "UV_EXTRA_INDEX_URL"):
        for item in env.get(var, "").split():  # uv: space-separated
            indexes.append(named.get(item) or checked_location(_unnamed(item), var))
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        if env.get(var, "").strip() and default is None:
            default = checked_location(env[var].strip(), var)
    for item in env.get("UV_FIND_LINKS", "").split(","):  # uv: comma-separated
        if item.strip():
            links.append(checked_location(item.strip(), "UV_FIND_LINKS"))
    if config is not None:
        path, data = config
        where = f"uv configuration {path}"
        for entry in data.get("index") or []:
            if not isinstance(entry, dict):
                raise IndexConfigError(f"{where}: each [[index]] must be a table")
            url = checked_location(entry.get("url"), f"{where}, [[index]] url")
            if entry.get("format") == "flat":
                links.append(url)
            elif entry.get("default") is True:
                default = default or url
            else:
                indexes.append(url)
        pip_table = data.get("pip")
        for table in (data, pip_table if isinstance(pip_table, dict) else {}):
            if "index-url" in table:
                default = default or checked_location(table["index-url"], f"{where}, index-url")
            indexes += [
                checked_location(u, f"{where}, extra-index-url")
                for u in _list(table.get("extra-index-url"), where)
            ]
            links += [
                checked_location(u, f"{where}, find-links")
                for u in _list(table.get("find-links"), where)
            ]
    return UvSources(tuple(dict.fromkeys(indexes)), default, tuple(dict.fromkeys(links)))


def _unnamed(item: str) -> str:
    """`name=url` (uv's named index) -> url."""
    name, sep, rest = item.partition("=")
    return rest if sep and re.fullmatch(r"[A-Za-z0-9_.-]+", name) and "://" in rest else item


def _list(value: object, where: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise IndexConfigError(f"{where}: expected a list of locations, not {value!r:.80}")
    return value


def _uv_config(env: dict[str, str]) -> tuple[Optional[tuple[str, dict[str, Any]]], dict[str, str]]:
    """The uv.toml that names indexes (parsed), and the URL of each index it names."""
    config = _read_uv_config(env)
    if config is None:
        return None, {}
    path, data = config
    named = {
        str(e["name"]): checked_location(e.get("url"), f"uv configuration {path}, [[index]] url")
        for e in data.get("index") or []
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    return (path, data), named


_SCHEMES = ("http", "https", "file")


def checked_location(value: object, where: str) -> str:
    """An index or find-links location as a URL (an absolute path becomes a file:// URL).

    Refused, with what to write instead: anything but an http(s) or file URL or an absolute
    path, a relative path (relative to what?), and `..` segments (a location names its folder
    plainly, not by a way round)."""
    from pathlib import Path
    from urllib.parse import unquote, urlsplit

    if not isinstance(value, str) or not value.strip():
        raise IndexConfigError(f"{where}: expected a URL or an absolute path, not {value!r:.80}")
    text = value.strip()
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise IndexConfigError(f"{where}: {text!r:.120} holds a space or a control character")
    parts = urlsplit(parseable_url(text, where))
    scheme = parts.scheme.lower()
    is_path = not scheme or (len(scheme) == 1 and sys.platform == "win32")  # C:\\wheels
    if not is_path and scheme not in _SCHEMES:
        raise IndexConfigError(
            f"{where}: {text!r:.120} is a {scheme}: URL; gpuenv reads indexes and find-links"
            " locations over http, https or file:// only"
        )
    if scheme in ("http", "https") and not parts.netloc:
        raise IndexConfigError(f"{where}: {text!r:.120} names no host")
    path = text if is_path else unquote(parts.path)
    if ".." in re.split(r"[/\\]", path):
        raise IndexConfigError(
            f"{where}: {text!r:.120} has a '..' segment; write the location it means"
        )
    if is_path:
        if not Path(text).is_absolute():
            raise IndexConfigError(
                f"{where}: {text!r:.120} is a relative path; gpuenv cannot tell what it is"
                " relative to: write an absolute path or a URL"
            )
        return Path(text).as_uri()
    return text


def parseable_url(value: str, where: str) -> str:
    """`value`, unless it cannot be read as a URL at all (`http://[::1`, a port that is not a
    number): IndexConfigError (exit 2) naming the setting, never a traceback further on."""
    from urllib.parse import urlsplit

    try:
        urlsplit(value).port  # noqa: B018 - reading the port is the check
    except ValueError as exc:
        raise IndexConfigError(
            f"{where}: {value!r:.120} is not a valid URL ({exc}); fix the setting"
        ) from None
    return value


def _usable(location: str) -> bool:
    """Local folders that no longer exist would make uv fail; remote ones are its business."""
    if location.startswith("file://"):
        return os.path.isdir(location[len("file://") :])
    if "://" not in location:
        return os.path.isdir(location)
    return True


def default_index_url(environ: Optional[dict[str, str]] = None) -> str:
    """The simple-API URL of the index the user's tools use first.

    uv's variables and configuration, then pip's (files and variables), then uv's own default,
    as uv states it, so a lab behind a mirror is never sent elsewhere and no host name is
    written here.
    """
    env = dict(os.environ if environ is None else environ)
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        if env.get(var, "").strip():
            return parseable_url(env[var].strip().split()[0], var).rstrip("/") + "/"
    from_uv_file = _uv_default_index(env)
    if from_uv_file:
        return parseable_url(from_uv_file, "uv configuration, index-url").rstrip("/") + "/"
    pip = _pip_settings(env)
    if pip.index_url:
        where = "pip configuration (" + ", ".join(pip.sources) + "), index-url"
        return parseable_url(pip.index_url, where).rstrip("/") + "/"
    from gpuenv.uv.binary import find_uv

    return uv_builtin_default_index(find_uv())


# uv wraps its help to $COLUMNS: any run of spaces and line breaks may stand between the words
_UV_DEFAULT = re.compile(r"--default-index\b.*?\(by\s+default:\s+<([^>\s]+)>\)", re.DOTALL)


@lru_cache(maxsize=4)
def uv_builtin_default_index(uv: str) -> str:
    """uv's built-in default index, read from its own help text (once per uv binary)."""
    from gpuenv.uv.question import ask_uv

    done = ask_uv([uv, "pip", "compile", "--help"], timeout=30)
    found = _UV_DEFAULT.search(done.stdout) if done else None
    if not found:
        raise IndexConfigError(
            "cannot tell which package index to use: set PIP_INDEX_URL (or UV_DEFAULT_INDEX)"
        )
    return found.group(1).rstrip("/") + "/"


class IndexConfigError(GpuenvError, RuntimeError):
    exit_code = USAGE_EXIT


def with_indexes(config: IndexConfig, urls: tuple[str, ...]) -> IndexConfig:
    """`config` with the command line's `--index URL`s added after its own extra indexes: a
    mirror of a framework index that the configured ones lack (each checked like a configured
    location)."""
    if not urls:
        return config
    import dataclasses

    checked = tuple(checked_location(u, f"--index {u}") for u in urls)
    extra = tuple(dict.fromkeys([*config.extra_index_urls, *checked]))
    return dataclasses.replace(config, extra_index_urls=extra)
