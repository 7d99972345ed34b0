"""pip's index settings, read the way pip reads them, without pip.

gpuenv is often installed without pip (`uv tool install`, `pipx`), and asking pip costs a
process start on every lock and install. pip's rules, as documented in its configuration guide:

- Files, loaded in this order, each later file overriding keys of the earlier ones:
  global (`$XDG_CONFIG_DIRS/pip/pip.conf` for each entry, default `/etc/xdg`, then
  `/etc/pip.conf`; `%ProgramData%\\pip\\pip.ini` on Windows; `/Library/Application
  Support/pip/pip.conf` on macOS), user (`~/.pip/pip.conf` (`~\\pip\\pip.ini` on Windows), then
  `$XDG_CONFIG_HOME/pip/pip.conf` (`%APPDATA%\\pip\\pip.ini`; on macOS `~/Library/Application
  Support/pip/pip.conf` when that folder exists)), site (`$VIRTUAL_ENV/pip.conf`), then the file
  named by `PIP_CONFIG_FILE`.
- `PIP_CONFIG_FILE` set to os.devnull loads no file at all; naming a file that exists skips the
  user files.
- Within the merged files, `[install]` overrides `[global]`; `PIP_*` variables override both.
  A value replaces, never extends: `PIP_EXTRA_INDEX_URL` replaces the files' list. Lists are
  whitespace-separated. Empty values are ignored.

Only the settings that choose where packages come from are read: index-url, extra-index-url,
find-links and no-index. The site file is the active virtual environment's (`$VIRTUAL_ENV`),
where the user's own `pip` would look, not gpuenv's own prefix.
"""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

KEYS = ("index-url", "extra-index-url", "find-links", "no-index")
COMMAND_SECTION = "install"  # gpuenv installs; pip's own `pip install` reads the same section
_TRUE = {"1", "y", "yes", "t", "true", "on"}
_FALSE = {"0", "n", "no", "f", "false", "off"}


class PipConfigError(GpuenvError, ValueError):
    """A pip configuration file or variable that pip itself would refuse."""

    exit_code = USAGE_EXIT


@dataclass(frozen=True)
class PipSettings:
    index_url: Optional[str] = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    sources: tuple[str, ...] = ()  # the files and variables the values came from

    def any(self) -> bool:
        return bool(self.index_url or self.extra_index_urls or self.find_links or self.no_index)


def config_files(
    env: Mapping[str, str], *, platform: str = sys.platform, etc: str = "/etc"
) -> list[str]:
    """pip's configuration files in load order (later wins); those absent are skipped later."""
    named = env.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    home = _home(env, platform)
    basename = "pip.ini" if platform == "win32" else "pip.conf"
    if platform == "win32":
        program_data = env.get("PROGRAMDATA") or env.get("ProgramData") or r"C:\ProgramData"
        global_files = [os.path.join(program_data, "pip", basename)]
        legacy = os.path.join(home, "pip", basename)
        appdata = env.get("APPDATA") or os.path.join(home, "AppData", "Roaming")
        user_files = [legacy, os.path.join(appdata, "pip", basename)]
    elif platform == "darwin":
        global_files = [os.path.join("/Library/Application Support/pip", basename)]
        mac_user = os.path.join(home, "Library", "Application Support", "pip")
        user_dir = mac_user if os.path.isdir(mac_user) else os.path.join(home, ".config", "pip")
        user_files = [os.path.join(home, ".pip", basename), os.path.join(user_dir, basename)]
    else:
        xdg_dirs = (env.get("XDG_CONFIG_DIRS") or "").strip() or "/etc/xdg"
        global_files = [
            os.path.join(os.path.expanduser(d), "pip", basename)
            for d in xdg_dirs.split(os.pathsep)
            if d
        ]
        global_files.append(os.path.join(etc, basename))
        xdg_home = (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
        user_files = [
            os.path.join(home, ".pip", basename),
            os.path.join(xdg_home, "pip", basename),
        ]
    files = list(global_files)
    if not (named and os.path.exists(named)):
        files += user_files
    if env.get("VIRTUAL_ENV"):
        files.append(os.path.join(env["VIRTUAL_ENV"], basename))
    if named:
        files.append(named)
    return files


def _home(env: Mapping[str, str], platform: str) -> str:
    if platform == "win32":
        return env.get("USERPROFILE") or os.path.expanduser("~")
    return env.get("HOME") or os.path.expanduser("~")


def read_pip_settings(
    env: Optional[Mapping[str, str]] = None,
    *,
    platform: str = sys.platform,
    etc: str = "/etc",
) -> PipSettings:
    """The index settings pip would use for `pip install` in this environment."""
    env = os.environ if env is None else env
    sections: dict[str, dict[str, tuple[str, str]]] = {"global": {}, COMMAND_SECTION: {}}
    for path in config_files(env, platform=platform, etc=etc):
        for section, values in _read_file(path).items():
            if section in sections:
                sections[section].update({k: (v, path) for k, v in values.items()})
    from_env = {
        _normalize(var[len("PIP_") :]): (value, f"${var}")
        for var, value in env.items()
        if var.startswith("PIP_")
    }
    merged: dict[str, tuple[str, str]] = {}
    for layer in (sections["global"], sections[COMMAND_SECTION], from_env):
        # Each section's empty values are skipped, so they leave the earlier section's value.
        merged.update({k: v for k, v in layer.items() if k in KEYS and v[0].strip()})
    no_index = False
    if "no-index" in merged:
        no_index = _boolean(*merged["no-index"])
    index = merged.get("index-url", ("", ""))[0].split()
    return PipSettings(
        index_url=None if no_index or not index else index[0],
        extra_index_urls=()
        if no_index
        else tuple(merged.get("extra-index-url", ("", ""))[0].split()),
        find_links=tuple(merged.get("find-links", ("", ""))[0].split()),
        no_index=no_index,
        sources=tuple(dict.fromkeys(source for _, source in merged.values())),
    )


def _normalize(name: str) -> str:
    """pip's option names: lower case, dashes, no leading `--` (index_url, --index-url)."""
    name = name.lower().replace("_", "-")
    return name[2:] if name.startswith("--") else name


MAX_CONFIG_BYTES = 1 << 20  # a pip.conf is a few lines


def _read_file(path: str) -> dict[str, dict[str, str]]:
    """The relevant keys of one ini file; {} when it does not exist (pip skips it too)."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    if not os.path.exists(path):
        return {}
    try:  # the bounded, non-blocking reader: a FIFO, a device or a huge file is refused
        text = read_bounded(Path(path), MAX_CONFIG_BYTES, "pip configuration").decode("utf-8")
    except UnsafePathError as exc:
        raise PipConfigError(f"{exc}; fix or remove it, or set PIP_CONFIG_FILE") from None
    except UnicodeDecodeError as exc:
        raise PipConfigError(
            f"pip configuration {path} cannot be read (not UTF-8: {exc.reason}); fix or remove"
            " it, or set PIP_CONFIG_FILE to another file"
        ) from None
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source=path)
    except (OSError, configparser.Error) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PipConfigError(
            f"pip configuration {path} cannot be read ({reason}); fix or remove it, or set"
            " PIP_CONFIG_FILE to another file"
        ) from None
    out: dict[str, dict[str, str]] = {}
    for section in parser.sections():
        values = {_normalize(k): v for k, v in parser.items(section)}
        out[section] = {k: v for k, v in values.items() if k in KEYS}
    return out


def _boolean(value: str, source: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise PipConfigError(
        f"no-index from {source}: {value!r} is not a yes/no value (1, 0, true, false)"
    )
