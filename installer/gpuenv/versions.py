"""Version strings as gpuenv compares them, in one place: a sort key (packaging's Version, parsed
once per string), membership in a specifier, and the `major.minor` of a version. For release numbers such as CUDA's, cuDNN's,
drivers' and Python's ("12.4", "535.183.01", "3.12")."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Optional

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet


@lru_cache(maxsize=4096)  # the resolver sorts the same few hundred strings many times
def version_key(text: str) -> Version:
    return Version(text)


@lru_cache(maxsize=4096)
def parsed_version(text: str) -> Optional[Version]:
    """The version, or None where the text is not one (such a version is in no specifier)."""
    try:
        return version_key(text)
    except InvalidVersion:
        return None


@lru_cache(maxsize=1024)  # a few dozen rows' specifiers, asked about hundreds of releases
def specifier_set(specifier: str) -> SpecifierSet:
    """The parsed specifier. Shared between callers: none of them sets its prereleases (its one
    mutable attribute)."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier)


def in_specifier(specifier: str, version: str) -> bool:
    """Whether a version (pre-releases included) is in a PEP 440 specifier such as ">=2.16.1"."""
    parsed = parsed_version(version)
    return parsed is not None and specifier_set(specifier).contains(parsed, prereleases=True)


def major_minor(version: str) -> str:
    """ "12.4.1" -> "12.4"; "12" -> "12"."""
    return ".".join(version.split(".")[:2])
