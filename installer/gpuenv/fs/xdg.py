"""The XDG base folders on Linux, as platformdirs finds them, without importing it (a few ms on
every command): the variable when it names an absolute path, else the spec's default under home;
a relative value is ignored, as the XDG Base Directory spec says and platformdirs does."""

from __future__ import annotations

import os


def xdg_folder(variable: str, default: str, app: str = "gpuenv") -> str:
    """`app`'s folder under $variable (XDG_CACHE_HOME, XDG_DATA_HOME), or under `default`
    ("~/.cache", "~/.local/share")."""
    value = os.environ.get(variable, "")
    base = value if os.path.isabs(value) else os.path.expanduser(default)
    return os.path.join(base, app)
