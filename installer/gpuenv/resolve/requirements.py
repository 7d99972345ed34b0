"""Framework requirements as users type them: `torch`, `tensorflow>=2.11`, `jax==0.4.*`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

# What people type -> (framework, extra project installed beside it)
_ALIASES: dict[str, tuple[str, str | None]] = {
    "torch": ("torch", None),
    "pytorch": ("torch", None),
    "torchvision": ("torch", "torchvision"),
    "torchaudio": ("torch", "torchaudio"),
    "tensorflow": ("tensorflow", None),
    "tensorflow-gpu": ("tensorflow", None),
    "tensorflow-cpu": ("tensorflow", None),
    "tf": ("tensorflow", None),
    "jax": ("jax", None),
    "jaxlib": ("jax", "jaxlib"),
}


class RequirementError(ValueError):
    pass


class Pin(NamedTuple):
    """A requirement's name and version range: all the resolver reads of one. (packaging's
    full Requirement parser, markers and all, costs resolve a tenth of its run time.)"""

    name: str  # canonical
    specifier: SpecifierSet


_PIN = re.compile(
    r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;.*)?$"
)


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pin(text: str) -> Pin:
    """`name[extras] specifier ; marker` -> Pin (markers are not evaluated: see callers)."""
    match = _PIN.match(text)
    if not match:
        raise RequirementError(f"not a requirement: {text!r}")
    try:
        spec = SpecifierSet(match.group(2).strip())
    except InvalidSpecifier as exc:
        raise RequirementError(f"not a requirement: {text!r} ({exc})") from exc
    return Pin(canonical_name(match.group(1)), spec)


@dataclass(frozen=True)
class FrameworkRequirement:
    framework: str  # torch | tensorflow | jax
    specifier: SpecifierSet
    with_projects: tuple[str, ...]  # torchvision, torchaudio, jaxlib asked for by name
    text: str
    # The version ranges typed for those projects ("torchaudio>=2.5"), per project.
    project_specifiers: tuple[tuple[str, SpecifierSet], ...] = ()

    def allows(self, version: str) -> bool:
        return _allows(self.specifier, version)

    def project_allows(self, project: str, version: str) -> bool:
        return all(
            _allows(spec, version) for name, spec in self.project_specifiers if name == project
        )


def _allows(specifier: SpecifierSet, version: str) -> bool:
    return specifier.contains(version, prereleases=False) or (
        # an explicit pin of a pre-release still counts
        bool(specifier)
        and specifier.contains(version, prereleases=True)
        and any(s.operator in ("==", "===") for s in specifier)
    )


def parse_requirements(texts: list[str] | tuple[str, ...]) -> tuple[FrameworkRequirement, ...]:
    """Merge requirements per framework; unknown names and bad syntax are errors."""
    merged: dict[str, FrameworkRequirement] = {}
    for text in texts:
        req = parse_pin(text)
        name = req.name
        if name not in _ALIASES:
            known = ", ".join(sorted({v[0] for v in _ALIASES.values()}))
            raise RequirementError(
                f"unknown framework {text.strip().split()[0]!r}: gpuenv plans GPU stacks for"
                f" {known} (and torchvision/torchaudio with torch)"
            )
        framework, project = _ALIASES[name]
        previous = merged.get(framework)
        # A torchvision/torchaudio/jaxlib range is that project's, not the framework's: it
        # narrows the releases whose recorded companion satisfies it.
        spec = req.specifier if project is None else SpecifierSet()
        projects: tuple[str, ...] = (project,) if project else ()
        project_specs = ((project, req.specifier),) if project and req.specifier else ()
        if previous:
            spec = previous.specifier & spec
            projects = tuple(dict.fromkeys((*previous.with_projects, *projects)))
            project_specs = (*previous.project_specifiers, *project_specs)
            text = f"{previous.text}, {text}"
        merged[framework] = FrameworkRequirement(framework, spec, projects, text, project_specs)
    order = {"torch": 0, "tensorflow": 1, "jax": 2}
    return tuple(sorted(merged.values(), key=lambda r: order[r.framework]))
