"""`gpuenv recipes check`: consistency of the knowledge base beyond what loading enforces.

Each finding is an error (the data is wrong or unusable) or a warning (worth a look).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuenv.machine import MachineError, parse_compute_capability, parse_driver_version
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import Framework, Sourced
from gpuenv.versions import major_minor

_PCI = re.compile(r"^[0-9a-f]{4}$")
_PY = re.compile(r"^3\.\d{1,2}$")


@dataclass(frozen=True)
class Finding:
    level: str  # error | warning
    where: str
    message: str
    # The index publishes something the knowledge base does not record yet (a new release, new
    # wheels): news for the maintenance check to record, not a fault in what is recorded.
    upstream: bool = False
    # For a new release: the (framework, version) `gpuenv recipes draft` drafts rows for.
    draft: Optional[tuple[str, str]] = None

    def __str__(self) -> str:
        tag = " (upstream news)" if self.upstream else ""
        return f"{self.level}{tag}: {self.where}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "level": self.level,
            "where": self.where,
            "message": self.message,
            "upstream": self.upstream,
            "draft": list(self.draft) if self.draft else None,
        }


def check(kb: KnowledgeBase) -> list[Finding]:
    findings: list[Finding] = []
    findings += _check_cuda(kb)
    findings += _check_gpus(kb)
    for fw in kb.frameworks.values():
        findings += _check_framework(kb, fw.name)
    findings += _check_nvidia(kb)
    ccs = {g.compute_capability for g in kb.gpus}  # jetson.toml against gpus.toml and cuda.toml
    findings += [Finding(*p) for p in kb.jetson.problems(ccs, lambda v: kb.toolkit(v) is not None)]
    return findings


def _provenance(where: str, p: Sourced) -> list[Finding]:
    if not p.verified and not p.note:
        return [Finding("error", where, "verified = false needs a note saying what is uncertain")]
    return []


def _cc(where: str, value: str) -> list[Finding]:
    try:
        if parse_compute_capability(value.rstrip("af")) != value.rstrip("af"):
            return [Finding("error", where, f"compute capability {value!r} is not in X.Y form")]
    except MachineError as exc:
        return [Finding("error", where, str(exc))]
    return []


def _driver(where: str, value: str) -> list[Finding]:
    try:
        parse_driver_version(value)
    except MachineError as exc:
        return [Finding("error", where, str(exc))]
    return []


def _check_cuda(kb: KnowledgeBase) -> list[Finding]:
    out: list[Finding] = []
    for m in kb.cuda_majors.values():
        where = f"cuda.toml major {m.major}"
        out += _provenance(where, m.provenance)
        out += _driver(where, m.min_driver_linux) + _driver(where, m.min_driver_windows)
    for t in kb.toolkits.values():
        where = f"cuda.toml toolkit {t.version}"
        out += _provenance(where, t.provenance)
        out += _driver(where, t.min_driver_linux) + _driver(where, t.min_driver_windows)
        for cc in t.sass:
            out += _cc(where, cc)
        if int(t.version.split(".")[0]) not in kb.cuda_majors:
            out.append(Finding("error", where, "its major has no [[major]] row"))
    seen: dict[str, str] = {}
    for g in kb.generations:
        where = f"cuda.toml generation {g.name}"
        out += _provenance(where, g.provenance)
        for cc in g.compute_capabilities:
            out += _cc(where, cc)
            if cc in seen:
                out.append(Finding("error", where, f"{cc} is also in {seen[cc]}"))
            seen[cc] = g.name
    for c in kb.cudnn.values():
        where = f"cudnn.toml release {c.version}"
        out += _provenance(where, c.provenance)
        if c.min_compute_capability:
            out += _cc(where, c.min_compute_capability)
    if not kb.cuda_majors or not kb.toolkits or not kb.generations:
        out.append(
            Finding("error", "cuda.toml", "needs [[major]], [[toolkit]] and [[generation]] rows")
        )
    return out


def _check_gpus(kb: KnowledgeBase) -> list[Finding]:
    out: list[Finding] = []
    generations = {g.name for g in kb.generations}
    by_pci: dict[str, str] = {}
    for gpu in kb.gpus:
        where = f"gpus.toml {gpu.name!r}"
        out += _provenance(where, gpu.provenance)
        out += _cc(where, gpu.compute_capability)
        if gpu.architecture not in generations:
            out.append(
                Finding(
                    "error", where, f"architecture {gpu.architecture!r} is no cuda.toml generation"
                )
            )
        else:
            gen = next(g for g in kb.generations if g.name == gpu.architecture)
            if gpu.compute_capability not in gen.compute_capabilities:
                out.append(
                    Finding(
                        "error",
                        where,
                        f"{gpu.compute_capability} is not a {gen.name} compute capability",
                    )
                )
        for pci in gpu.pci_ids:
            if not _PCI.match(pci):
                out.append(
                    Finding("error", where, f"PCI id {pci!r} is not 4 lower-case hex digits")
                )
            previous = by_pci.get(pci)
            if previous and previous != gpu.compute_capability:
                out.append(
                    Finding(
                        "error",
                        where,
                        f"PCI id {pci} is also listed with compute capability {previous}",
                    )
                )
            by_pci[pci] = gpu.compute_capability
    if not kb.gpus:
        out.append(Finding("error", "gpus.toml", "no [[gpu]] rows"))
    out += _unconfirmed_names(kb)
    return out


def _unconfirmed_names(kb: KnowledgeBase) -> list[Finding]:
    """A row NVIDIA's tables do not confirm must say so and why; a name lookup must never fall
    on it alone (then nothing confirmed stands behind the name's compute capability)."""
    out: list[Finding] = []
    for gpu in kb.gpus:
        if gpu.confirmed_by_nvidia:
            continue
        where = f"gpus.toml {gpu.name!r} ({', '.join(gpu.pci_ids)})"
        if gpu.provenance.verified or not gpu.provenance.note:
            out.append(
                Finding(
                    "error",
                    where,
                    "confirmed_by_nvidia = false needs verified = false and a note saying why",
                )
            )
        confirmed = [
            g for g in kb.gpus if g.confirmed_by_nvidia and g.name == gpu.name and g is not gpu
        ]
        if not confirmed:
            out.append(
                Finding(
                    "warning",
                    where,
                    "no row NVIDIA's tables confirm carries this name: a lookup by name relies on"
                    " this unconfirmed row",
                )
            )
    return out


def _check_framework(kb: KnowledgeBase, name: str) -> list[Finding]:
    fw = kb.frameworks[name]
    out: list[Finding] = []
    used: set[str] = set()
    for key, archset in fw.archsets.items():
        where = f"{fw.file} archsets.{key}"
        out += _provenance(where, archset.provenance)
        for cc in (*archset.sass, *archset.ptx):
            out += _cc(where, cc)
    out += _measured(fw)
    versions: set[str] = set()
    for rel in fw.releases:
        where = f"{fw.file} {name} {rel.version}"
        if rel.version in versions:
            out.append(Finding("error", where, "duplicate release"))
        versions.add(rel.version)
        out += _provenance(where, rel.provenance)
        if rel.released is None:
            out.append(
                Finding("warning", where, "no release date (needed to lock 'as of' the release)")
            )
        for platform, pys in rel.python.items():
            for py in pys:
                if not _PY.match(py):
                    out.append(Finding("error", where, f"python.{platform}: {py!r} is not 3.X"))
        out += _requirements(where, "companions", rel.companions)
        for build in rel.builds:
            bwhere = f"{where} [{build.variant}]"
            out += _provenance(bwhere, build.provenance)
            out += _requirements(bwhere, "pip_libs", build.pip_libs)
            out += _requirements(bwhere, "companions", build.companions)
            if build.archs:
                used.add(build.archs.name)
            for p in build.pypi_default:
                if p not in build.platforms:
                    out.append(
                        Finding("error", bwhere, f"pypi_default {p} is not among its platforms")
                    )
            for p in build.platforms:
                if not rel.python.get(p):
                    out.append(
                        Finding(
                            "error",
                            bwhere,
                            f"built for {p}, but the release lists no Python for it",
                        )
                    )
            if build.cuda:
                if kb.toolkit(build.cuda) is None:
                    out.append(
                        Finding(
                            "warning", bwhere, f"CUDA {build.cuda} has no cuda.toml toolkit row"
                        )
                    )
                if build.cudnn and major_minor(build.cudnn) not in kb.cudnn:
                    out.append(
                        Finding("warning", bwhere, f"cuDNN {build.cudnn} has no cudnn.toml row")
                    )
            for cc in build.broken_on:
                out += _cc(bwhere, cc)
    out += _check_broken(kb, name)
    for key in fw.archsets:
        if key not in used:
            out.append(Finding("warning", f"{fw.file} archsets.{key}", "not used by any build"))
    return out


def _check_broken(kb: KnowledgeBase, name: str) -> list[Finding]:
    """[[broken]] rows: real compute capabilities, and at least one recorded build covered."""
    fw = kb.frameworks[name]
    out: list[Finding] = []
    for i, row in enumerate(fw.broken):
        where = f"{fw.file} [[broken]] #{i + 1} ({row.versions})"
        out += _provenance(where, row.provenance)
        for cc in (*row.compute_capabilities, *row.unknown_on):
            out += _cc(where, cc)
        both = set(row.compute_capabilities) & set(row.unknown_on)
        if both:
            out.append(Finding("error", where, f"{sorted(both)} both broken and unknown"))
        if not any(row.covers(r, b) for r in fw.releases for b in r.builds):
            out.append(Finding("error", where, "covers no recorded build"))
    return out


_MEASURED = re.compile(r"^(\S+\.whl) sha256=([0-9a-f]{64})$")


def _measured(fw: Framework) -> list[Finding]:
    """An archset read from wheels names each wheel and its sha256, is verified, and each
    wheel is one of a release whose builds use that archset (the reading is of this row)."""
    users: dict[str, set[Version]] = {}
    for rel in fw.releases:
        for build in rel.builds:
            if build.archs:
                for v in (rel.version, rel.related.get("jaxlib", rel.version)):
                    users.setdefault(build.archs.name, set()).add(Version(v))
    out: list[Finding] = []
    for key, archset in fw.archsets.items():
        where = f"{fw.file} archsets.{key}"
        if archset.measured and not archset.provenance.verified:
            out.append(Finding("error", where, "measured from wheels, yet verified = false"))
        for text in archset.measured:
            match = _MEASURED.match(text)
            if not match:
                out.append(
                    Finding("error", where, f"measured {text!r}: not '<wheel> sha256=<hex>'")
                )
                continue
            try:
                version = parse_wheel_filename(match[1])[1]
            except (InvalidWheelFilename, InvalidVersion):
                out.append(Finding("error", where, f"measured {match[1]!r} is not a wheel name"))
                continue
            if Version(version.public) not in users.get(key, set()):
                out.append(
                    Finding(
                        "error",
                        where,
                        f"measured {match[1]}: no release {version.public} build uses this archset",
                    )
                )
    return out


def _requirements(where: str, field: str, texts: tuple[str, ...]) -> list[Finding]:
    out = []
    for text in texts:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            out.append(Finding("error", where, f"{field}: {text!r} is not a requirement ({exc})"))
    return out


_NVIDIA_LIB = re.compile(r"^nvidia-[a-z0-9-]+$")


def _check_nvidia(kb: KnowledgeBase) -> list[Finding]:
    """nvidia.toml: each package in one library at most, each library named once, each source
    a list of wheels of the row's own packages; and every nvidia-* CUDA library a framework row
    requires is in some library row (else its folder was never measured)."""
    out: list[Finding] = []
    owner: dict[str, str] = {}
    names: set[str] = set()
    for row in kb.nvidia_libraries:
        where = f"nvidia.toml library {row.name}"
        if row.name in names:
            out.append(Finding("error", where, "another [[library]] row has this name"))
        names.add(row.name)
        if not row.verified and not row.note:
            out.append(
                Finding("error", where, "verified = false needs a note saying what is uncertain")
            )
        for package in row.packages:
            if package in owner and owner[package] != row.name:
                out.append(
                    Finding("error", where, f"{package} is also in library {owner[package]}")
                )
            owner.setdefault(package, row.name)
        out += _wheels_read(where, row.source, row.packages)
    for fw in kb.frameworks.values():
        for rel in fw.releases:
            for build in rel.builds:
                for text in build.pip_libs:
                    try:
                        name = canonicalize_name(Requirement(text).name)
                    except InvalidRequirement:
                        continue  # reported by _requirements
                    if _NVIDIA_LIB.match(name) and kb.library_of(name) is None:
                        out.append(
                            Finding(
                                "warning",
                                f"{fw.file} {fw.name} {rel.version} [{build.variant}]",
                                f"pip_libs: {name} is in no nvidia.toml [[library]] row"
                                " (which folder its wheels write is unmeasured)",
                            )
                        )
    return out


def _wheels_read(where: str, source: str, packages: tuple[str, ...]) -> list[Finding]:
    """A library row's source: '<wheel file> sha256=<hex>' entries joined by '; ', each a wheel
    of one of the row's packages."""
    out = []
    for text in (t.strip() for t in source.split(";")):
        match = _MEASURED.match(text)
        if not match:
            out.append(Finding("error", where, f"source {text!r}: not '<wheel> sha256=<hex>'"))
            continue
        try:
            project = parse_wheel_filename(match[1])[0]
        except (InvalidWheelFilename, InvalidVersion):
            out.append(Finding("error", where, f"source {match[1]!r} is not a wheel name"))
            continue
        if project not in packages:
            out.append(
                Finding(
                    "error",
                    where,
                    f"source {match[1]} is a wheel of {project}, not of its packages",
                )
            )
    return out
