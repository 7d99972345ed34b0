"""The package index the user's tools are configured for, so gpuenv's own look-ups agree.

Order: uv's and pip's environment variables, then pip's configuration files (through pip itself,
which knows where they live on every OS), then pip's built-in default, read from pip rather than
written here, so a lab behind a mirror is never sent elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Optional

_ENV_VARS = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")


class IndexConfigError(RuntimeError):
    pass


def default_index_url() -> str:
    for var in _ENV_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return value.rstrip("/") + "/"
    configured = _pip_config_value(("global.index-url", "install.index-url", ":env:.index-url"))
    if configured:
        return configured.rstrip("/") + "/"
    return _pip_builtin_default()


def _pip_config_value(keys: tuple[str, ...]) -> Optional[str]:
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("'\"")
    for key in keys:
        if values.get(key):
            return values[key].split()[0]
    return None


def _pip_builtin_default() -> str:
    try:
        from pip._internal.models.index import PyPI  # pip's own notion of the default index
    except ImportError as exc:
        raise IndexConfigError(
            "cannot tell which package index to use: set PIP_INDEX_URL (or UV_DEFAULT_INDEX)"
        ) from exc
    return str(PyPI.simple_url).rstrip("/") + "/"
