"""Is the knowledge base behind the index? One line per framework whose index publishes a final
release newer than the newest one recorded (resolve cannot plan what it does not know).

resolve stays pure: lock and setup call this with what their availability probe already read.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.version import InvalidVersion, Version

import gpuenv
from gpuenv.recipes.kb import KnowledgeBase


def update_hint(package_file: str = gpuenv.__file__, python: str = sys.executable) -> str:
    """What really updates this gpuenv: its knowledge base ships with the checkout it was
    installed from. Never `pip install gpuenv`: that name on the index is not this project's."""
    checkout = Path(package_file).resolve().parent.parent.parent  # <checkout>/installer/gpuenv
    if (checkout / "recipes").is_dir() and (checkout / "pyproject.toml").is_file():
        where = shlex.quote(str(checkout))
        return (
            f"update the gpuenv checkout it runs from (`git -C {where} pull`, then"
            f" `{shlex.quote(python)} -m pip install -e {where}`) to plan with it"
        )
    return (
        "reinstall gpuenv from an updated checkout of its repository (`git pull` there, then"
        " `pip install CHECKOUT`) to plan with it"
    )


def newer_releases(
    kb: KnowledgeBase, frameworks: Iterable[str], published: Mapping[str, Iterable[str]]
) -> list[str]:
    """`published`: package -> the versions the reachable sources list (local labels allowed)."""
    out: list[str] = []
    for name in dict.fromkeys(frameworks):
        framework = kb.frameworks.get(name)
        if framework is None or not framework.releases:
            continue
        newest = max(Version(r.version) for r in framework.releases)
        seen = [_final(v) for v in published.get(name, ())]
        newer = [v for v in seen if v is not None and v > newest]
        if newer:
            top = max(newer)
            out.append(
                f"the index publishes {name} {top}, newer than the newest {name} in gpuenv's"
                f" knowledge base ({newest}): plans leave it out; {update_hint()}"
            )
    return out


def _final(text: str) -> Version | None:
    try:
        version = Version(text)
    except InvalidVersion:
        return None
    if version.is_prerelease or version.is_devrelease:
        return None
    return Version(version.public)
