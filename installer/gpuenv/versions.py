"""Version strings as gpuenv compares them, in one place: a sort key (packaging's Version, parsed
once per string), membership in a specifier, and the `major.minor` of a version. For release numbers such as CUDA's, cuDNN's,
drivers' and Python's ("12.4", "535.183.01", "3.12")."""

from __future__ import annotations

from functools import lru_cache

from packaging.version import Version


@lru_cache(maxsize=4096)  # the resolver sorts the same few hundred strings many times
def version_key(text: str) -> Version:
    return Version(text)


@lru_cache(maxsize=4096)  # the resolver asks the same few rows about the same releases
def in_specifier(specifier: str, version: str) -> bool:
    """Whether a version (pre-releases included) is in a PEP 440 specifier such as ">=2.16.1"."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(version, prereleases=True)


def major_minor(version: str) -> str:
    """ "12.4.1" -> "12.4"; "12" -> "12"."""
    return ".".join(version.split(".")[:2])
