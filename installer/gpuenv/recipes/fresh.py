"""Is the knowledge base behind the index? One line per framework whose index publishes a final
release newer than the newest one recorded (resolve cannot plan what it does not know).

resolve stays pure: lock and setup call this with what their availability probe already read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from packaging.version import InvalidVersion, Version

from gpuenv.recipes.kb import KnowledgeBase

UPDATE_HINT = "update gpuenv (`pip install -U gpuenv`) to plan with it"


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
                f" knowledge base ({newest}): plans leave it out; {UPDATE_HINT}"
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
