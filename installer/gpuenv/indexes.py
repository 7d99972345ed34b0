"""The user's package-index configuration: for uv's arguments and for gpuenv's own look-ups.

uv reads its own configuration (uv.toml, `UV_*` variables) by itself. pip's (pip.conf,
`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_FIND_LINKS`) it ignores, so a lab that set up a
mirror for pip would silently bypass it: gpuenv carries pip's settings over, unless the user
configured uv's indexes (`UV_*` index variables, or a user or system uv.toml naming an index),
which then win.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Optional

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

    def uv_args(self) -> list[str]:
        args: list[str] = []
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
        return IndexConfig(origin=f"uv configuration ({uv_file})")
    pip = _pip_settings(env)
    index = pip.get("index-url")
    extras = tuple(u for u in pip.get("extra-index-url", "").split() if _usable(u))
    links = tuple(u for u in pip.get("find-links", "").split() if _usable(u))
    skipped = [
        u
        for u in pip.get("extra-index-url", "").split() + pip.get("find-links", "").split()
        if not _usable(u)
    ]
    notes = tuple(f"pip setting {u} skipped: the folder does not exist" for u in skipped)
    if not (index or extras or links):
        return IndexConfig(notes=notes)
    return IndexConfig(
        index_url=index,
        extra_index_urls=extras,
        find_links=links,
        origin="pip configuration",
        notes=notes,
    )


def _uv_config_with_indexes(env: dict[str, str]) -> Optional[str]:
    """A uv.toml that sets an index (uv reads it by itself; pip's settings must not override it)."""
    if env.get("UV_NO_CONFIG"):
        return None
    candidates = [env.get("UV_CONFIG_FILE", "")]
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    candidates += [os.path.join(xdg, "uv", "uv.toml"), "/etc/uv/uv.toml"]
    if sys.platform == "win32" and env.get("APPDATA"):
        candidates.append(os.path.join(env["APPDATA"], "uv", "uv.toml"))
    for path in filter(None, candidates):
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        if any(key in text for key in ("index-url", "[[index]]", "find-links", "extra-index-url")):
            return path
    return None


def _usable(location: str) -> bool:
    """Local folders that no longer exist would make uv fail; remote ones are its business."""
    if location.startswith("file://"):
        return os.path.isdir(location[len("file://") :])
    if "://" not in location:
        return os.path.isdir(location)
    return True


def _pip_settings(env: dict[str, str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for key, var in (
        ("index-url", "PIP_INDEX_URL"),
        ("extra-index-url", "PIP_EXTRA_INDEX_URL"),
        ("find-links", "PIP_FIND_LINKS"),
    ):
        if env.get(var):
            values[key] = env[var]
    if len(values) == 3:
        return values
    for key, value in _pip_config_list(env).items():
        name = key.rsplit(".", 1)[-1]
        section = key.split(".", 1)[0]
        if name in ("index-url", "extra-index-url", "find-links") and section in (
            "global",
            "install",
        ):
            values.setdefault(name, value)
    return values


def _pip_config_list(env: dict[str, str]) -> dict[str, str]:
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(("PIP_", "VIRTUAL_ENV"))))
    if key not in _PIP_CONFIG_CACHE:
        _PIP_CONFIG_CACHE[key] = _read_pip_config(env)
    return _PIP_CONFIG_CACHE[key]


_PIP_CONFIG_CACHE: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}


def _read_pip_config(env: dict[str, str]) -> dict[str, str]:
    """pip's own view of its configuration (files and variables), asked once per process."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=env,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("'\"")
    return values


def default_index_url(environ: Optional[dict[str, str]] = None) -> str:
    """The simple-API URL of the index the user's tools use first.

    uv's and pip's variables, then pip's configuration files, then pip's built-in default, read
    from pip itself rather than written here, so a lab behind a mirror is never sent elsewhere.
    """
    env = dict(os.environ if environ is None else environ)
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if env.get(var, "").strip():
            return env[var].strip().rstrip("/") + "/"
    configured = _pip_settings(env).get("index-url")
    if configured:
        return configured.split()[0].rstrip("/") + "/"
    try:
        from pip._internal.models.index import PyPI  # pip's own notion of the default index
    except ImportError as exc:
        raise IndexConfigError(
            "cannot tell which package index to use: set PIP_INDEX_URL (or UV_DEFAULT_INDEX)"
        ) from exc
    return str(PyPI.simple_url).rstrip("/") + "/"


class IndexConfigError(RuntimeError):
    pass
