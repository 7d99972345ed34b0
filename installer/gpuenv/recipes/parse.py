"""The knowledge base's TOML files, parsed row by row into records: strict about structure (a
missing or mistyped field is an error naming the file and row), so every later stage can trust
the records' types. Deeper consistency checks live in `gpuenv.recipes.check`.

Long because it holds one parser per kind of table (GPUs, generations, toolkits, cuDNN, CUDA
majors, frameworks' releases, builds, archsets, broken rows), sharing the field readers at its
top; each parser is short, and splitting them apart would scatter those readers."""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path
from typing import Any, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuenv.recipes.jetson import JETSON_FILE, JetsonTable, parse_jetson
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import (
    PLATFORMS,
    ArchSet,
    Build,
    CudaMajor,
    CudnnRelease,
    Framework,
    FrameworkDriver,
    Generation,
    GpuRecord,
    KnownBroken,
    NvidiaLibrary,
    RecipeError,
    Release,
    Sourced,
    Toolkit,
    UnpinnedWheels,
    WslSupport,
    canonical_name,
)

FRAMEWORK_FILES = {"torch": "pytorch.toml", "tensorflow": "tensorflow.toml", "jax": "jax.toml"}
_DRIVER_OSES = ("linux", "windows", "wsl")
_RELATED = ("torchvision", "torchaudio", "jaxlib")


def parse_knowledge_base(root: Path, raws: dict[str, bytes], digest: str) -> KnowledgeBase:
    """The knowledge base from its files' bytes (by file name); `digest` names their content."""
    # Only when the knowledge base changed: every other run reads the cached records.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib

    docs: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for name, raw in raws.items():
        try:
            docs[name] = _one_copy_each(tomllib.loads(raw.decode("utf-8")), texts)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RecipeError(f"{root / name}: not valid TOML: {exc}") from exc
        except RecursionError:
            raise RecipeError(
                f"{root / name}: nested too deeply to be a knowledge-base file"
            ) from None

    frameworks = {
        name: _load_framework(name, fname, docs[fname])
        for name, fname in FRAMEWORK_FILES.items()
        if fname in docs
    }
    cuda = docs.get("cuda.toml", {})
    cudnn = docs.get("cudnn.toml", {})
    gpus = docs.get("gpus.toml", {})
    branches = _driver_branches(cuda.get("drivers"))
    generations = tuple(
        _generation(r, _where("cuda.toml", "generation", i, r), branches)
        for i, r in enumerate(cuda.get("generation", []))
    )
    return KnowledgeBase(
        root=str(root),
        frameworks=frameworks,
        cuda_majors={
            m.major: m
            for m in (
                _cuda_major(r, _where("cuda.toml", "major", i, r))
                for i, r in enumerate(cuda.get("major", []))
            )
        },
        toolkits={
            t.version: t
            for t in (
                _toolkit(r, _where("cuda.toml", "toolkit", i, r))
                for i, r in enumerate(cuda.get("toolkit", []))
            )
        },
        generations=generations,
        cudnn={
            c.version: c
            for c in (
                _cudnn(r, _where("cudnn.toml", "release", i, r))
                for i, r in enumerate(cudnn.get("release", []))
            )
        },
        gpus=tuple(
            _gpu(r, _where("gpus.toml", "gpu", i, r)) for i, r in enumerate(gpus.get("gpu", []))
        ),
        digest=digest,
        driver_branches=branches,
        wsl=_wsl(cuda["wsl"], "cuda.toml [wsl]") if "wsl" in cuda else None,
        framework_drivers=tuple(
            _framework_driver(r, _where("cuda.toml", "framework_driver", i, r))
            for i, r in enumerate(cuda.get("framework_driver", []))
        ),
        nvidia_libraries=_nvidia_libraries(docs["nvidia.toml"]) if "nvidia.toml" in docs else (),
        unpinned_wheels=_unpinned_wheels(docs["nvidia.toml"]) if "nvidia.toml" in docs else (),
        jetson=parse_jetson(docs[JETSON_FILE]) if JETSON_FILE in docs else JetsonTable(),
    )


def _where(fname: str, table: str, index: int, row: dict[str, Any]) -> str:
    label = row.get("version") or row.get("name") or row.get("major") or row.get("variant")
    return f"{fname} [[{table}]] #{index + 1}" + (f" ({label})" if label else "")


def _req(row: dict[str, Any], key: str, where: str) -> Any:
    if key not in row:
        raise RecipeError(f"{where}: missing required field {key!r}")
    return row[key]


def _str(row: dict[str, Any], key: str, where: str) -> str:
    value = _req(row, key, where)
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise RecipeError(f"{where}: {key!r} must be a string, got {value!r}")
    return str(value)


def _opt_str(row: dict[str, Any], key: str, where: str) -> Optional[str]:
    if row.get(key) is None:
        return None
    return _str(row, key, where)


def _strs(row: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecipeError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    return tuple(value)


def _date(row: dict[str, Any], key: str, where: str) -> Optional[dt.date]:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    raise RecipeError(f"{where}: {key!r} must be a TOML date (YYYY-MM-DD), got {value!r}")


def _load_framework(name: str, fname: str, doc: dict[str, Any]) -> Framework:
    declared = doc.get("framework")
    if declared != name:
        raise RecipeError(f"{fname}: framework = {declared!r}, expected {name!r}")
    archsets: dict[str, ArchSet] = {}
    for key, row in (doc.get("archsets") or {}).items():
        where = f"{fname} [archsets.{key}]"
        archsets[key] = ArchSet(
            name=key,
            sass=_strs(row, "sass", where),
            ptx=_strs(row, "ptx", where),
            provenance=Sourced.from_row(row, where),
            measured=_strs(row, "measured", where),
        )
    releases = [
        _release(name, row, archsets, _where(fname, "release", i, row))
        for i, row in enumerate(doc.get("release", []))
    ]
    releases.sort(key=lambda r: r.parsed_version, reverse=True)
    broken = tuple(
        _known_broken(name, row, _where(fname, "broken", i, row))
        for i, row in enumerate(doc.get("broken", []))
    )
    return Framework(
        name=name, releases=tuple(releases), archsets=archsets, file=fname, broken=broken
    )


def _known_broken(framework: str, row: dict[str, Any], where: str) -> KnownBroken:
    versions = _str(row, "versions", where)
    try:
        SpecifierSet(versions)
    except InvalidSpecifier as exc:
        raise RecipeError(f"{where}: versions {versions!r} is not a version range: {exc}") from exc
    ccs = _strs(row, "compute_capabilities", where)
    if not ccs:
        raise RecipeError(f"{where}: 'compute_capabilities' names no GPU")
    for key in ("reason", "instead"):
        if not _str(row, key, where).strip():
            raise RecipeError(f"{where}: {key!r} is empty")
    return KnownBroken(
        framework=framework,
        versions=versions,
        variants=_strs(row, "variants", where),
        platforms=_strs(row, "platforms", where),
        compute_capabilities=ccs,
        unknown_on=_strs(row, "unknown_on", where),
        reason=_str(row, "reason", where).strip(),
        instead=_str(row, "instead", where).strip(),
        provenance=Sourced.from_row(row, where),
    )


def _release(
    framework: str, row: dict[str, Any], archsets: dict[str, ArchSet], where: str
) -> Release:
    version = _str(row, "version", where)
    try:
        Version(version)
    except InvalidVersion as exc:
        raise RecipeError(f"{where}: {exc}") from exc
    python_table = row.get("python") or {}
    if not isinstance(python_table, dict):
        raise RecipeError(f"{where}: 'python' must be a table of platform = [versions]")
    python: dict[str, tuple[str, ...]] = {}
    for platform in python_table:
        if platform not in PLATFORMS:
            raise RecipeError(f"{where}: unknown platform {platform!r} in python")
        python[platform] = _strs(python_table, platform, f"{where} python")
    builds = tuple(
        _build(b, archsets, f"{where} build #{j + 1} ({b.get('variant')})")
        for j, b in enumerate(row.get("build", []))
    )
    return Release(
        framework=framework,
        version=version,
        released=_date(row, "released", where),
        python=python,
        companions=_strs(row, "companions", where),
        package=_opt_str(row, "package", where),
        related={k: str(row[k]) for k in _RELATED if row.get(k)},
        builds=builds,
        builds_complete=bool(row.get("builds_complete", True)),
        provenance=Sourced.from_row(row, where),
        unlockable=(_opt_str(row, "unlockable", where) or "").strip(),
        cutoff_exempt=_strs(row, "cutoff_exempt", where),
        related_python=_related_python(row, where),
    )


def _related_python(row: dict[str, Any], where: str) -> dict[str, dict[str, tuple[str, ...]]]:
    table = row.get("related_python") or {}
    if not isinstance(table, dict):
        raise RecipeError(f"{where}: 'related_python' must be a table of project tables")
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for project, platforms in table.items():
        if project not in _RELATED or not isinstance(platforms, dict):
            raise RecipeError(f"{where}: related_python.{project} is not a companion's table")
        for platform in platforms:
            if platform not in PLATFORMS:
                raise RecipeError(f"{where}: unknown platform {platform!r} in related_python")
        out[project] = {
            p: _strs(platforms, p, f"{where} related_python.{project}") for p in platforms
        }
    return out


def _build(row: dict[str, Any], archsets: dict[str, ArchSet], where: str) -> Build:
    cuda = _opt_str(row, "cuda", where)
    archs_key = _opt_str(row, "archs", where)
    if cuda and not archs_key:
        raise RecipeError(f"{where}: a CUDA build needs 'archs' (its compiled architectures)")
    if archs_key and archs_key not in archsets:
        raise RecipeError(f"{where}: archs {archs_key!r} is not an [archsets] entry")
    platforms = _strs(row, "platforms", where)
    for p in (*platforms, *_strs(row, "pypi_default", where)):
        if p not in PLATFORMS:
            raise RecipeError(f"{where}: unknown platform {p!r}")
    return Build(
        variant=_str(row, "variant", where),
        platforms=platforms,
        cuda=cuda,
        cudnn=_opt_str(row, "cudnn", where),
        archs=archsets[archs_key] if archs_key else None,
        index=_opt_str(row, "index", where),
        local=str(row.get("local") or ""),
        pypi_default=_strs(row, "pypi_default", where),
        package=_opt_str(row, "package", where),
        extra=_opt_str(row, "extra", where),
        pip_libs=_strs(row, "pip_libs", where),
        conda_libs=_strs(row, "conda_libs", where),
        companions=_strs(row, "companions", where),
        broken_on=_strs(row, "broken_on", where),
        provenance=Sourced.from_row(row, where),
        pip_libs_declared=_bool(row, "pip_libs_declared", where, default=True),
        system_libs=(_opt_str(row, "system_libs", where) or "").strip(),
    )


def _wsl(row: dict[str, Any], where: str) -> WslSupport:
    if not isinstance(row, dict):
        raise RecipeError(f"{where}: must be a table")
    return WslSupport(
        min_driver_windows=_str(row, "min_driver_windows", where),
        min_compute_capability=_str(row, "min_compute_capability", where),
        unofficial_from=_str(row, "unofficial_from", where),
        provenance=Sourced.from_row(row, where),
    )


def _one_copy_each(value: Any, texts: dict[str, str]) -> Any:
    """The parsed TOML with each equal string one object: the pickled records then hold each
    text once (pickle keeps one copy of an object), a quarter less to read and unpickle on
    every run (the same platform names, sources and notes recur on hundreds of rows)."""
    if isinstance(value, str):
        return texts.setdefault(value, value)
    if isinstance(value, dict):
        return {texts.setdefault(k, k): _one_copy_each(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_one_copy_each(v, texts) for v in value]
    return value


def _cuda_major(row: dict[str, Any], where: str) -> CudaMajor:
    return CudaMajor(
        major=int(_req(row, "major", where)),
        min_driver_linux=_str(row, "min_driver_linux", where),
        min_driver_windows=_str(row, "min_driver_windows", where),
        provenance=Sourced.from_row(row, where),
        minor_version_compatible=_bool(row, "minor_version_compatible", where, default=True),
    )


def _toolkit(row: dict[str, Any], where: str) -> Toolkit:
    return Toolkit(
        version=_str(row, "version", where),
        min_driver_linux=_str(row, "min_driver_linux", where),
        min_driver_windows=_str(row, "min_driver_windows", where),
        sass=_strs(row, "sass", where),
        released=_date(row, "released", where),
        provenance=Sourced.from_row(row, where),
    )


def _driver_branches(table: Any) -> tuple[int, ...]:
    where = "cuda.toml [drivers]"
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise RecipeError(f"{where}: must be a table with 'branches' and 'source'")
    Sourced.from_row(table, where)
    names = _strs(table, "branches", where)
    if not all(n.isdigit() for n in names):
        raise RecipeError(f'{where}: branches are driver branch numbers like "580": {names!r}')
    branches = tuple(int(n) for n in names)
    if list(branches) != sorted(set(branches)):
        raise RecipeError(f"{where}: branches must be listed once each, oldest first")
    return branches


def _driver(row: dict[str, Any], key: str, where: str) -> Optional[str]:
    value = _opt_str(row, key, where)
    if value is not None:
        parts = value.split(".")
        if len(parts) < 2 or not all(p.isdigit() for p in parts):
            raise RecipeError(f"{where}: {key!r} is not a driver version: {value!r}")
    return value


def _generation(row: dict[str, Any], where: str, branches: tuple[int, ...]) -> Generation:
    last = _opt_str(row, "last_driver_branch", where)
    if last is not None:
        # A driver is read as "newer than the last branch" only when the branch after it is
        # known: without it, every newer driver would round down to the last branch.
        if not last.isdigit() or int(last) not in branches:
            raise RecipeError(f"{where}: last_driver_branch {last!r} is not in [drivers] branches")
        if int(last) == branches[-1]:
            raise RecipeError(
                f"{where}: last_driver_branch {last} needs the branch after it in [drivers]"
                " branches, to tell its drivers from newer ones"
            )
    return Generation(
        name=_str(row, "name", where),
        compute_capabilities=_strs(row, "compute_capabilities", where),
        last_driver_branch=last,
        max_cuda=_opt_str(row, "max_cuda", where),
        provenance=Sourced.from_row(row, where),
        min_driver_linux=_driver(row, "min_driver_linux", where),
        min_driver_windows=_driver(row, "min_driver_windows", where),
        max_cuda_by_cc=_str_table(row, "max_cuda_by_cc", where),
    )


def _str_table(row: dict[str, Any], key: str, where: str) -> dict[str, str]:
    table = row.get(key) or {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise RecipeError(f"{where}: {key!r} must be a table of strings")
    return {str(k): v for k, v in table.items()}


def _framework_driver(row: dict[str, Any], where: str) -> FrameworkDriver:
    os_key = _str(row, "os", where)
    if os_key not in _DRIVER_OSES:
        raise RecipeError(f"{where}: os {os_key!r} is not one of {', '.join(_DRIVER_OSES)}")
    major = _req(row, "cuda_major", where)
    if not isinstance(major, int) or isinstance(major, bool):
        raise RecipeError(f"{where}: 'cuda_major' must be an integer")
    minimum = _driver(row, "min_driver", where)
    if minimum is None:
        raise RecipeError(f"{where}: missing required field 'min_driver'")
    return FrameworkDriver(
        framework=_str(row, "framework", where),
        os=os_key,
        cuda_major=major,
        min_driver=minimum,
        provenance=Sourced.from_row(row, where),
    )


def _cudnn(row: dict[str, Any], where: str) -> CudnnRelease:
    majors = row.get("cuda_majors", [])
    if not isinstance(majors, list) or not all(isinstance(m, int) for m in majors):
        raise RecipeError(f"{where}: 'cuda_majors' must be a list of integers")
    return CudnnRelease(
        version=_str(row, "version", where),
        cuda_majors=tuple(majors),
        min_compute_capability=_opt_str(row, "min_compute_capability", where),
        pip=_strs(row, "pip", where),
        provenance=Sourced.from_row(row, where),
    )


def _gpu(row: dict[str, Any], where: str) -> GpuRecord:
    return GpuRecord(
        name=_str(row, "name", where),
        aliases=_strs(row, "aliases", where),
        pci_ids=tuple(p.lower() for p in _strs(row, "pci_ids", where)),
        compute_capability=_str(row, "compute_capability", where),
        architecture=_str(row, "architecture", where),
        chip=str(row.get("chip") or ""),
        kind=str(row.get("kind") or ""),
        provenance=Sourced.from_row(row, where),
        confirmed_by_nvidia=_bool(row, "confirmed_by_nvidia", where, default=True),
    )


def _bool(row: dict[str, Any], key: str, where: str, *, default: bool) -> bool:
    value = row.get(key, default)
    if not isinstance(value, bool):
        raise RecipeError(f"{where}: {key!r} must be true or false, got {value!r}")
    return value


_NVIDIA_FILE = "nvidia.toml"
_NVIDIA_TOP = {"schema", "library", "unpinned"}
_UNPINNED_ROW = {"framework", "since", "packages", "source", "note", "verified"}
_NVIDIA_ROW = {"name", "packages", "folder", "source", "note", "verified"}


def _nvidia_libraries(doc: dict[str, Any]) -> tuple[NvidiaLibrary, ...]:
    """nvidia.toml's [[library]] rows. Unlike the older tables this file is strict about keys
    too: a misspelt `pakages` would silently leave a library without its packages."""
    unknown = sorted(set(doc) - _NVIDIA_TOP)
    if unknown:
        raise RecipeError(f"{_NVIDIA_FILE}: unknown top-level key(s) {', '.join(unknown)}")
    if doc.get("schema") != 1:
        raise RecipeError(f"{_NVIDIA_FILE}: schema = {doc.get('schema')!r}, expected 1")
    rows = doc.get("library", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise RecipeError(f"{_NVIDIA_FILE}: 'library' must be an array of [[library]] tables")
    return tuple(
        _nvidia_library(r, _where(_NVIDIA_FILE, "library", i, r)) for i, r in enumerate(rows)
    )


def _nvidia_library(row: dict[str, Any], where: str) -> NvidiaLibrary:
    unknown = sorted(set(row) - _NVIDIA_ROW)
    if unknown:
        raise RecipeError(f"{where}: unknown key(s) {', '.join(unknown)}")
    texts = {}
    for key in ("name", "folder", "source"):
        value = _req(row, key, where)
        if not isinstance(value, str) or not value.strip():
            raise RecipeError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
        texts[key] = value.strip()
    note = row.get("note")
    if note is not None and not isinstance(note, str):
        raise RecipeError(f"{where}: 'note' must be a string, got {note!r}")
    packages = _req(row, "packages", where)
    if not isinstance(packages, list) or not packages:
        raise RecipeError(f"{where}: 'packages' must be a non-empty list of project names")
    for package in packages:
        if not isinstance(package, str) or canonical_name(package) != package:
            raise RecipeError(
                f"{where}: package {package!r} is not a canonical project name"
                " (lower case, words joined by '-')"
            )
    if len(set(packages)) != len(packages):
        raise RecipeError(f"{where}: 'packages' names a package twice: {packages!r}")
    folder = texts["folder"]
    if (
        folder.startswith("/")
        or "\\" in folder
        or any(p in ("", ".", "..") for p in folder.split("/"))
    ):
        raise RecipeError(f"{where}: folder {folder!r} is not a relative path like 'nvidia/cudnn'")
    return NvidiaLibrary(
        name=texts["name"],
        packages=tuple(packages),
        folder=folder,
        source=texts["source"],
        note=(note.strip() or None) if note is not None else None,
        verified=_bool(row, "verified", where, default=True),
    )


def _unpinned_wheels(doc: dict[str, Any]) -> tuple[UnpinnedWheels, ...]:
    """nvidia.toml's [[unpinned]] rows (strict keys, as the [[library]] rows)."""
    rows = doc.get("unpinned", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise RecipeError(f"{_NVIDIA_FILE}: 'unpinned' must be an array of [[unpinned]] tables")
    return tuple(_unpinned(r, _where(_NVIDIA_FILE, "unpinned", i, r)) for i, r in enumerate(rows))


def _unpinned(row: dict[str, Any], where: str) -> UnpinnedWheels:
    unknown = sorted(set(row) - _UNPINNED_ROW)
    if unknown:
        raise RecipeError(f"{where}: unknown key(s) {', '.join(unknown)}")
    texts = {}
    for key in ("framework", "since", "source"):
        value = _req(row, key, where)
        if not isinstance(value, str) or not value.strip():
            raise RecipeError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
        texts[key] = value.strip()
    try:
        Version(texts["since"])
    except InvalidVersion as exc:
        raise RecipeError(f"{where}: since {texts['since']!r} is not a version") from exc
    packages = _req(row, "packages", where)
    if not isinstance(packages, list) or not packages:
        raise RecipeError(f"{where}: 'packages' must be a non-empty list")
    for package in packages:
        if not isinstance(package, str) or not _UNPINNED_PACKAGE.fullmatch(package):
            raise RecipeError(
                f"{where}: package {package!r} must be a canonical name ending in -cu{{major}}"
            )
    note = row.get("note")
    if note is not None and not isinstance(note, str):
        raise RecipeError(f"{where}: 'note' must be a string, got {note!r}")
    return UnpinnedWheels(
        framework=texts["framework"],
        since=texts["since"],
        packages=tuple(packages),
        source=texts["source"],
        note=(note.strip() or None) if note is not None else None,
        verified=_bool(row, "verified", where, default=True),
    )


_UNPINNED_PACKAGE = re.compile(r"nvidia(?:-[a-z0-9]+)+-cu\{major\}")
