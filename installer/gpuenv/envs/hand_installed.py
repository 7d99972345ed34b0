"""Packages someone installed into an environment by hand (`pip install` inside it): a rebuild
from the lockfile would drop them, so setup names them first instead of losing them silently."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name

# Installers' own tools, which venvs may carry without any lockfile naming them.
_TOOLS = frozenset({"pip", "setuptools", "wheel", "uv"})
_DIST = re.compile(r"^(?P<name>[^-]+)-[^-]+\.(?:dist-info|egg-info)$")


def installed_distributions(env_dir: Path) -> set[str]:
    """Canonical names of the distributions in the environment's site-packages."""
    names: set[str] = set()
    for site in _site_packages(env_dir):
        for entry in site.iterdir():
            match = _DIST.match(entry.name)
            if match:
                names.add(canonicalize_name(match.group("name")))
    return names


def hand_installed(env_dir: Path, locked: Iterable[str]) -> list[str]:
    """Distributions present that the environment's lockfile did not put there."""
    expected = {canonicalize_name(n) for n in locked} | _TOOLS
    return sorted(installed_distributions(env_dir) - expected)


def _site_packages(env_dir: Path) -> list[Path]:
    candidates = [
        env_dir / "Lib" / "site-packages",
        *sorted(env_dir.glob("lib/python3*/site-packages")),
    ]
    return [c for c in candidates if c.is_dir() and not c.is_symlink()]
