"""Framework requirements as users type them: `torch`, `tensorflow>=2.11`, `jax==0.4.*`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.recipes.model import canonical_name as canonical_name
from gpuenv.versions import parsed_version

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


# Names that ask for the CPU-only package, and retired names, with what became of them.
_CPU_ONLY_NAMES = frozenset({"tensorflow-cpu"})
RETIRED_NAMES = {
    # the default index: tensorflow-gpu's last wheels are 2.11.0 (manylinux) and 2.10.1
    # (win_amd64); 2.12.0 is an sdist whose setup.py raises (an error package)
    "tensorflow-gpu": (
        "tensorflow-gpu is the retired name of TensorFlow's GPU package (wheels up to 2.11.0 on"
        " Linux, 2.10.1 on Windows; 2.12.0 is an sdist that fails on install)"
    ),
}


def retired_name_warning(name: str, package: str, version: str, on_gpu: bool) -> str:
    """What a retired name was planned as: the package the chosen build installs, and why."""
    if package == name:  # the release's GPU build is still published under that name
        what = f"installed as {name} {version}, the name of that release's GPU build (its plain"
        what += " tensorflow package is CPU-only)"
    elif not on_gpu:
        what = f"planned as {package} {version}, on the CPU"
    else:
        what = f"planned as {package} {version}, itself a CUDA build"
    return f"{RETIRED_NAMES[name]}: {what}"


class RequirementError(GpuenvError, ValueError):
    exit_code = USAGE_EXIT


class Pin(NamedTuple):
    """A requirement's name and version range: all the resolver reads of one. (packaging's
    full Requirement parser, markers and all, costs resolve a tenth of its run time.)"""

    name: str  # canonical
    specifier: SpecifierSet


_PIN = re.compile(
    r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*\(?([^;()]*)\)?\s*(?:;.*)?$"
)
_EXTRA = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"  # PEP 508 identifier, compiled on use


# Memoised: resolve reads the same few dozen library requirements of the knowledge base for
# every CUDA build it weighs; sharing a SpecifierSet is safe, as nothing here sets its
# prereleases (its one mutable attribute).
@lru_cache(maxsize=1024)
def parse_pin(text: str) -> Pin:
    """`name[extras] specifier ; marker` -> Pin (markers are not evaluated: see callers)."""
    match = _PIN.match(text)
    if not match:
        raise RequirementError(f"not a requirement: {text!r}")
    try:
        spec = SpecifierSet(match.group(3).strip())
    except InvalidSpecifier as exc:
        raise RequirementError(f"not a requirement: {text!r} ({exc})") from exc
    return Pin(canonical_name(match.group(1)), spec)


def _refuse_what_would_be_ignored(text: str) -> None:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise RequirementError(f"requirement {text!r} contains a control character (a newline?)")
    if ";" in text:
        raise RequirementError(
            f"requirement {text!r} has an environment marker; gpuenv plans for one target"
            " machine, so markers are not supported: describe the target instead (--os, --arch,"
            " --python, or a lab file's classes) and give the requirement without the marker"
        )


def parse_extras(text: str) -> tuple[str, ...]:
    """`jax[cuda12_pip]` -> ("cuda12-pip",): extras in their PEP 685 normal form."""
    match = _PIN.match(text)
    if not match or not match.group(2):
        return ()
    raw = [e.strip() for e in match.group(2).split(",") if e.strip()]
    for extra in raw:
        if not re.match(_EXTRA, extra):
            raise RequirementError(f"not a requirement: {text!r} (bad extra {extra!r})")
    return tuple(canonical_name(e) for e in raw)


@dataclass(frozen=True)
class FrameworkRequirement:
    """One framework as the user asked for it: version range, extras, projects."""

    framework: str  # torch | tensorflow | jax
    specifier: SpecifierSet
    with_projects: tuple[str, ...]  # torchvision, torchaudio, jaxlib asked for by name
    text: str
    extras: tuple[str, ...] = ()  # PEP 685 names: jax[cuda12] -> ("cuda12",)
    # The version ranges typed for those projects ("torchaudio>=2.5"), per project.
    project_specifiers: tuple[tuple[str, SpecifierSet], ...] = ()
    names: tuple[str, ...] = ()  # the names typed for it, canonical ("tensorflow-cpu")

    @property
    def cpu_only(self) -> bool:
        """`tensorflow-cpu` asks for the CPU-only build: a CPU plan for this framework."""
        return any(n in _CPU_ONLY_NAMES for n in self.names)

    @property
    def retired_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.names if n in RETIRED_NAMES)

    def allows(self, version: str) -> bool:
        return _allows(self.specifier, version)

    def project_allows(self, project: str, version: str) -> bool:
        return all(
            _allows(spec, version) for name, spec in self.project_specifiers if name == project
        )

    def accepts(self, variant: str, extra: str | None) -> bool:
        """Whether a build of this variant (installed with this extra) is what the extras ask
        for: jax[cuda12] takes the cuda12 builds (whose extra may be cuda12_pip), never cuda13."""
        if not self.extras:
            return True
        offered = {canonical_name(variant)} | ({canonical_name(extra)} if extra else set())
        return all(e in offered for e in self.extras)


def is_framework_name(text: str) -> bool:
    """Whether a requirement names a framework (or a project planned with one)."""
    match = _PIN.match(text)
    return match is not None and canonical_name(match.group(1)) in _ALIASES


# Memoised: resolve asks about each release once per build of it (hundreds of times a run), and
# parsing the version string is most of the answer's cost.
@lru_cache(maxsize=4096)
def _allows(specifier: SpecifierSet, version: str) -> bool:
    parsed = parsed_version(version)
    if parsed is None:
        return False
    return specifier.contains(parsed, prereleases=False) or (
        # an explicit pin of a pre-release still counts
        bool(specifier)
        and specifier.contains(parsed, prereleases=True)
        and any(s.operator in ("==", "===") for s in specifier)
    )


def parse_requirements(texts: list[str] | tuple[str, ...]) -> tuple[FrameworkRequirement, ...]:
    """Merge requirements per framework; unknown names and bad syntax are errors.

    A framework requirement is a name, its extras and a version range: an environment marker
    would be dropped by the resolver, so it is refused with a message rather than silently
    ignored (gpuenv plans for one target machine).
    """
    merged: dict[str, FrameworkRequirement] = {}
    for text in texts:
        _refuse_what_would_be_ignored(text)
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
        extras = parse_extras(text)
        if extras and project is not None:
            raise RequirementError(
                f"{text.strip()!r}: gpuenv plans {project} beside {framework} and cannot honour"
                f" its extras; ask for {project} without them"
            )
        project_specs = ((project, req.specifier),) if project and req.specifier else ()
        names: tuple[str, ...] = (name,)
        if previous:
            names = tuple(dict.fromkeys((*previous.names, name)))
            spec = previous.specifier & spec
            projects = tuple(dict.fromkeys((*previous.with_projects, *projects)))
            extras = tuple(dict.fromkeys((*previous.extras, *extras)))
            project_specs = (*previous.project_specifiers, *project_specs)
            text = f"{previous.text}, {text}"
        merged[framework] = FrameworkRequirement(
            framework, spec, projects, text, extras, project_specifiers=project_specs, names=names
        )
    order = {"torch": 0, "tensorflow": 1, "jax": 2}
    return tuple(sorted(merged.values(), key=lambda r: order[r.framework]))
