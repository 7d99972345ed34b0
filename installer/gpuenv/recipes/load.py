"""Loading the knowledge base (`recipes/`) into typed, immutable records.

The loader is strict about structure (a missing required field is an error that names the file
and row) but cheap: resolve calls it on every run. Deeper consistency checks live in
`gpuenv.recipes.check`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from packaging.version import InvalidVersion, Version

from gpuenv import cache
from gpuenv.machine import cc_tuple

PLATFORMS = ("linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64")
FRAMEWORK_FILES = {"torch": "pytorch.toml", "tensorflow": "tensorflow.toml", "jax": "jax.toml"}
RECIPES_ENV = "GPUENV_RECIPES"
_RECORD_SHAPE = 4  # bump when a record (or the pickled KnowledgeBase) gains or loses a field
_DRIVER_OSES = ("linux", "windows", "wsl")


class RecipeError(ValueError):
    """The knowledge base is malformed: names the file and the row."""


@dataclass(frozen=True)
class Sourced:
    """Where a knowledge-base row comes from, and whether it was checked against it."""

    source: str
    verified: bool
    note: str


@dataclass(frozen=True)
class ArchSet:
    """The GPU architectures a build compiles for: SASS (machine code) and PTX."""

    name: str
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    provenance: Sourced


@dataclass(frozen=True)
class Build:
    """One build of a release: its variant (cu118, cpu, ...), platforms, CUDA and index."""

    variant: str
    platforms: tuple[str, ...]
    cuda: Optional[str]
    cudnn: Optional[str]
    archs: Optional[ArchSet]
    index: Optional[str]
    local: str
    pypi_default: tuple[str, ...]
    package: Optional[str]
    extra: Optional[str]
    pip_libs: tuple[str, ...]
    conda_libs: tuple[str, ...]
    companions: tuple[str, ...]
    broken_on: tuple[str, ...]
    provenance: Sourced

    @property
    def is_gpu(self) -> bool:
        return self.cuda is not None


@dataclass(frozen=True)
class Release:
    """One release of a framework, with the Pythons it supports and its builds."""

    framework: str
    version: str
    released: Optional[dt.date]
    python: dict[str, tuple[str, ...]]
    companions: tuple[str, ...]
    package: Optional[str]
    related: dict[str, str]  # torchvision, torchaudio, jaxlib: companion releases of the project
    builds: tuple[Build, ...]
    builds_complete: bool  # false: only some builds could be verified; absence proves nothing
    provenance: Sourced

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)


@dataclass(frozen=True)
class Framework:
    """A framework's releases (newest first) and its named architecture sets."""

    name: str
    releases: tuple[Release, ...]  # newest first
    archsets: dict[str, ArchSet]
    file: str


@dataclass(frozen=True)
class CudaMajor:
    """A CUDA major version and the driver it needs at least (minor-version compatibility)."""

    major: int
    min_driver_linux: str
    min_driver_windows: str
    provenance: Sourced


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit release: its own driver floor and the architectures it compiles for."""

    version: str
    min_driver_linux: str
    min_driver_windows: str
    sass: tuple[str, ...]
    released: Optional[dt.date]
    provenance: Sourced


@dataclass(frozen=True)
class Generation:
    """A GPU generation: its compute capabilities and the drivers and CUDA it runs."""

    name: str
    compute_capabilities: tuple[str, ...]
    last_driver_branch: Optional[str]
    max_cuda: Optional[str]
    provenance: Sourced
    # The first driver that supports the generation at all (Blackwell: R570), per OS.
    min_driver_linux: Optional[str] = None
    min_driver_windows: Optional[str] = None

    def min_driver(self, driver_os: str) -> Optional[str]:
        return self.min_driver_windows if driver_os == "windows" else self.min_driver_linux


@dataclass(frozen=True)
class FrameworkDriver:
    """A framework's own documented driver floor for its CUDA builds on one OS (TensorFlow
    documents a Windows driver >= 528.33 for WSL2)."""

    framework: str
    os: str  # linux | windows | wsl
    cuda_major: int
    min_driver: str
    provenance: Sourced


@dataclass(frozen=True)
class CudnnRelease:
    """A cuDNN release: the CUDA majors it is built for and the GPUs it has kernels for."""

    version: str
    cuda_majors: tuple[int, ...]
    min_compute_capability: Optional[str]
    pip: tuple[str, ...]
    provenance: Sourced


@dataclass(frozen=True)
class GpuRecord:
    """One GPU model from NVIDIA's tables: names, PCI ids and compute capability."""

    name: str
    aliases: tuple[str, ...]
    pci_ids: tuple[str, ...]
    compute_capability: str
    architecture: str
    chip: str
    kind: str
    provenance: Sourced
    # False where only pci.ids names this chip so: NVIDIA's own name tables do not list it.
    confirmed_by_nvidia: bool = True


class AmbiguousGpu(LookupError):
    """A name that NVIDIA's tables give to chips of different compute capability."""

    def __init__(self, name: str, candidates: tuple[GpuRecord, ...]) -> None:
        self.name = name
        self.candidates = candidates
        ccs = sorted({c.compute_capability for c in candidates}, key=cc_tuple)
        options = "; ".join(
            f"{cc}: "
            + ", ".join(
                f"{c.chip} {c.kind} (PCI {', '.join('10de:' + p for p in c.pci_ids)})"
                for c in candidates
                if c.compute_capability == cc
            )
            for cc in ccs
        )
        flags = " or ".join(f"--gpu {cc}" for cc in ccs)
        super().__init__(
            f"{name!r} is sold with chips of different compute capability ({options}); pass"
            f" yours: {flags}, or its PCI id (e.g. --gpu 10de:{candidates[0].pci_ids[0]};"
            " `nvidia-smi --query-gpu=pci.device_id --format=csv` prints it)"
        )


class AmbiguousGpuName(AmbiguousGpu):
    """A typed name that fits GPUs of different names and compute capabilities ("16GB"), or
    any number of them without a model number ("RTX", "GeForce")."""

    def __init__(self, name: str, candidates: tuple[GpuRecord, ...]) -> None:
        unique = {(normalize_gpu_name(c.name), c.compute_capability): c for c in candidates}
        names = sorted(unique.values(), key=_by_cc_then_name)
        shown = ", ".join(f"{c.name} ({c.compute_capability})" for c in names[:_SHOWN])
        more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
        LookupError.__init__(
            self,
            f"{name!r} fits {len(names)} GPUs"
            + (
                " of different compute capability"
                if len({c.compute_capability for c in names}) > 1
                else ", too many to tell by a name without a model number"
            )
            + f" ({shown}{more});"
            f" pass the full name (e.g. --gpu {names[0].name!r}) or the compute capability"
            f" (e.g. --gpu {names[0].compute_capability})",
        )
        self.name = name
        self.candidates = candidates


_SHOWN = 8  # candidates an error or warning lists: enough to pick from, never hundreds


def _by_cc_then_name(record: GpuRecord) -> tuple[tuple[int, ...], str]:
    return cc_tuple(record.compute_capability), record.name


@dataclass(frozen=True)
class GpuMatch:
    """The GPU a name or PCI id stands for, and the other chips sold under that name that
    NVIDIA's tables do not confirm (the plan warns about them)."""

    record: GpuRecord
    unconfirmed: tuple[GpuRecord, ...] = ()
    # Other GPUs a typed name fits, all of the record's compute capability ("A100": the
    # A100-PCIE-40GB, A100-SXM4-80GB, ...): the plan holds for each and says so.
    alternatives: tuple[GpuRecord, ...] = ()


@dataclass
class KnowledgeBase:
    """The whole knowledge base (`recipes/`), loaded, with its GPU look-up tables."""

    root: Path
    frameworks: dict[str, Framework]
    cuda_majors: dict[int, CudaMajor]
    toolkits: dict[str, Toolkit]
    generations: tuple[Generation, ...]
    cudnn: dict[str, CudnnRelease]
    gpus: tuple[GpuRecord, ...]
    digest: str
    driver_branches: tuple[int, ...] = ()  # ascending: R390, R396, ..., R580, R590, ...
    framework_drivers: tuple[FrameworkDriver, ...] = ()
    _by_pci: dict[str, list[GpuRecord]] = field(default_factory=dict, repr=False, init=False)
    _by_name: dict[str, list[GpuRecord]] = field(default_factory=dict, repr=False, init=False)
    # The same names without brand words ("rtx 3060", "t4"), for names people type: built on
    # the first such name, so runs that never read one (--gpu 8.6, detection) never pay for it.
    _by_model_index: Optional[dict[str, list[GpuRecord]]] = field(
        default=None, repr=False, init=False, compare=False
    )

    def __post_init__(self) -> None:
        for gpu in self.gpus:
            for pci in gpu.pci_ids:
                self._by_pci.setdefault(pci, []).append(gpu)
            for name in (gpu.name, *gpu.aliases):
                self._by_name.setdefault(normalize_gpu_name(name), []).append(gpu)

    @property
    def _by_model(self) -> dict[str, list[GpuRecord]]:
        if self._by_model_index is None:
            index: dict[str, list[GpuRecord]] = {}
            for key, records in self._by_name.items():
                index.setdefault(_without_brands(key), []).extend(records)
            self._by_model_index = index
        return self._by_model_index

    # --- GPUs -------------------------------------------------------------------------------
    def find_gpu(
        self, name: Optional[str] = None, pci_id: Optional[str] = None
    ) -> Optional[GpuRecord]:
        """The GPU by PCI device id first (unambiguous), then by name; None when unknown.

        Raises AmbiguousGpu when only a name is known and NVIDIA's tables give it to chips of
        different compute capability (GeForce GT 730 is Fermi, or Kepler)."""
        match = self.match_gpu(name, pci_id)
        return match.record if match else None

    def match_gpu(
        self, name: Optional[str] = None, pci_id: Optional[str] = None
    ) -> Optional[GpuMatch]:
        """Like find_gpu, and says which other chips the name may mean.

        A name shared by chips of different compute capability means the chip that NVIDIA's
        own name tables list under it when only one compute capability is so confirmed (the
        retail GTX 750 Ti, GM107, not the GK106 board only pci.ids names so)."""
        if pci_id:
            device = pci_id.lower().split(":")[-1].removeprefix("0x").zfill(4)
            hits = self._by_pci.get(device, [])
            if hits:
                return GpuMatch(_pick(hits, name))
        if not name:
            return None
        hits = self._lookup_name(name)
        if not hits:
            return None
        if len({h.compute_capability for h in hits}) == 1:
            return GpuMatch(hits[0])
        confirmed = [h for h in hits if h.confirmed_by_nvidia]
        if confirmed and len({h.compute_capability for h in confirmed}) == 1:
            chosen = confirmed[0]
            others = tuple(h for h in hits if h.compute_capability != chosen.compute_capability)
            return GpuMatch(chosen, others)
        raise AmbiguousGpu(name, tuple(confirmed or hits))

    def _lookup_name(
        self, name: str, index: Optional[dict[str, list[GpuRecord]]] = None
    ) -> list[GpuRecord]:
        index = self._by_name if index is None else index
        key = normalize_gpu_name(name)
        if key in index:
            return index[key]
        # Reported names carry suffixes the tables leave out ("A100-SXM4-80GB", "with Max-Q
        # Design"): take the longest known name whose words all appear, in order.
        words = key.split()
        best: list[GpuRecord] = []
        best_len = 0
        for known, records in index.items():
            known_words = known.split()
            if (
                len(known_words) > best_len
                and _is_subsequence(known_words, words)  # cheaper, and rarely true: first
                and _has_model_number(known_words)
            ):
                best, best_len = records, len(known_words)
        return best

    def match_typed_gpu(self, text: str) -> Optional[GpuMatch]:
        """The GPU a name typed by a person means ("RTX 3090", "940M", "A100"); None when none.

        Every name match_gpu knows is read as it reads it (detected names never come here).
        Otherwise brand words may be left out, and a name may be a part of a known one: the
        exact name (brand words dropped) wins over a part ("RTX 3060" is never the 3060 Ti);
        several GPUs fitting equally are one answer only when they share a compute capability.
        A part with no model number ("RTX", "Laptop GPU") is refused as too vague."""
        match = self.match_gpu(name=text)
        if match is not None:
            return match
        key = normalize_gpu_name(text)
        model = _without_brands(key)
        brands = set(key.split()) - set(model.split())
        if not model:  # "GeForce": a brand, no GPU
            branded = _branded(brands, list(self.gpus)) if brands else []
            if branded:
                raise AmbiguousGpuName(text, tuple(branded))
            return None
        words = model.split()
        exact = self._by_model.get(model, [])
        hits = _branded(brands, exact) or _branded(
            brands,
            [
                record
                for known, records in self._by_model.items()
                if _is_subsequence(words, known.split())  # the typed words are part of it
                for record in records
            ],
        )
        if not hits:  # "RTX 3090 24GB": a known name is part of the typed one
            hits = _branded(brands, self._lookup_name(model, self._by_model))
            if not hits:
                return None
        elif not exact and not _has_model_number(words):
            raise AmbiguousGpuName(text, tuple(hits))
        names = {normalize_gpu_name(h.name) for h in hits}  # "SUPER" and "Super" are one
        if len(names) == 1:  # one name, maybe several chips: read exactly as the full name is
            return self.match_gpu(name=hits[0].name)
        if len({h.compute_capability for h in hits}) > 1:
            raise AmbiguousGpuName(text, tuple(hits))
        chosen = min(hits, key=lambda h: len(h.name.split()))  # the plainest name, first row
        key = normalize_gpu_name(chosen.name)
        others = {normalize_gpu_name(h.name): h for h in hits if normalize_gpu_name(h.name) != key}
        return GpuMatch(chosen, alternatives=tuple(sorted(others.values(), key=_by_cc_then_name)))

    def close_gpu_names(self, text: str) -> list[str]:
        """Known names that look like a misspelt one (for the unknown-GPU error)."""
        import difflib  # only on the error path

        key = normalize_gpu_name(text)
        model = _without_brands(key)
        brands = set(key.split()) - set(model.split())
        found = difflib.get_close_matches(model, list(self._by_model), n=3, cutoff=0.85)
        return list(
            dict.fromkeys(r.name for k in found for r in _branded(brands, self._by_model[k][:1]))
        )

    def generation_for(self, cc: str) -> Optional[Generation]:
        for gen in self.generations:
            if cc in gen.compute_capabilities:
                return gen
        major = cc_tuple(cc)[0]
        for gen in self.generations:
            if any(cc_tuple(c)[0] == major for c in gen.compute_capabilities):
                return gen
        return None

    # --- drivers ----------------------------------------------------------------------------
    def driver_branch(self, driver: tuple[int, ...]) -> Optional[int]:
        """The branch a driver belongs to: the newest known branch not above its major number.

        Linux drivers start at their branch's number (470.256.02 is R470); Windows drivers of a
        branch run a few numbers above it (R470: 471.11 ... 474.xx, R580: 580.88 ... 58x.xx),
        so rounding the major down to a known branch reads both right."""
        fitting = [b for b in self.driver_branches if b <= driver[0]]
        return fitting[-1] if fitting else None

    def framework_driver(self, framework: str, os_key: str, cuda: str) -> Optional[FrameworkDriver]:
        major = int(cuda.split(".")[0])
        for row in self.framework_drivers:
            if row.framework == framework and row.os == os_key and row.cuda_major == major:
                return row
        return None

    # --- CUDA -------------------------------------------------------------------------------
    def toolkit(self, version: str) -> Optional[Toolkit]:
        return self.toolkits.get(major_minor(version))

    def framework(self, name: str) -> Framework:
        try:
            return self.frameworks[name]
        except KeyError:
            known = ", ".join(sorted(self.frameworks))
            raise RecipeError(f"unknown framework {name!r}; known: {known}") from None


def _pick(hits: list[GpuRecord], name: Optional[str]) -> GpuRecord:
    if name and len(hits) > 1:
        key = normalize_gpu_name(name)
        for hit in hits:
            if key in {normalize_gpu_name(n) for n in (hit.name, *hit.aliases)}:
                return hit
    return hits[0]


def _is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(word in it for word in needle)


def _has_model_number(words: list[str]) -> bool:
    # A bare family word ("geforce", "quadro") must never match a whole product.
    return any(any(ch.isdigit() for ch in w) for w in words)


# Compiled on first use (re caches it): a GPU known by compute capability or PCI id never needs it.
_NAME_NOISE = r"\b(nvidia|\(r\)|\(tm\)|corporation)\b|[®™]"


def normalize_gpu_name(name: str) -> str:
    text = re.sub(_NAME_NOISE, " ", name.lower())
    text = text.replace("-", " ").replace("_", " ").replace("(", " ").replace(")", " ")
    return " ".join(text.split())


# Words that name a product line, not a GPU, and that people leave out ("RTX 3090", "T4").
# "TITAN" is not one: "TITAN X" and "TITAN V" are different GPUs. NVIDIA is already noise.
GPU_BRAND_WORDS = frozenset({"geforce", "tesla", "quadro"})


def _branded(brands: set[str], records: list[GpuRecord]) -> list[GpuRecord]:
    """The records whose names carry every brand word typed ("Quadro RTX 3060" is no GeForce)."""
    return [r for r in records if brands <= set(normalize_gpu_name(r.name).split())]


def _without_brands(key: str) -> str:
    return " ".join(w for w in key.split() if w not in GPU_BRAND_WORDS)


def major_minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2])


# --- loading ---------------------------------------------------------------------------------


def recipes_dir() -> Path:
    """Where the knowledge base lives: $GPUENV_RECIPES, the installed copy, or the checkout."""
    override = os.environ.get(RECIPES_ENV)
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent.parent  # the gpuenv package folder
    packaged = here / "_recipes"
    if packaged.is_dir():
        return packaged
    return here.parent.parent / "recipes"


@lru_cache(maxsize=4)
def load_knowledge_base(root: Optional[Path] = None) -> KnowledgeBase:
    """The knowledge base, parsed once per content: TOML parsing is most of resolve's time, so
    the parsed form is cached (keyed by a hash of every file) in gpuenv's cache folder, and
    found again by the files' stamps (names, sizes, times) while they stay unchanged."""
    root = Path(root) if root is not None else recipes_dir()
    if not root.is_dir():
        raise RecipeError(f"knowledge base not found at {root} (set {RECIPES_ENV} to its folder)")
    paths = sorted(root.glob("*.toml"))
    # Stamped before the files are read, so a file changed while they are read has a new stamp
    # next time (to the file system's time resolution, as for Python's own bytecode cache).
    stamp = _stamp(paths)
    known = _known_stamps()
    remembered = known.get(str(root))
    if isinstance(remembered, tuple) and len(remembered) == 2 and remembered[0] == stamp:
        cached = cache.read_pickle("recipes", remembered[1])
        if isinstance(cached, KnowledgeBase) and remembered[1] == _cache_key(cached.digest):
            return cached
    kb = _load_by_content(root, paths)
    known.pop(str(root), None)  # re-inserted last: the most recently read folders are kept
    known[str(root)] = (stamp, _cache_key(kb.digest))
    cache.write_pickle("recipes", _STAMPS, dict(list(known.items())[-_STAMPED_ROOTS:]))
    return kb


# Which content each knowledge-base folder had when last read, by its files' names, sizes,
# times and inodes, as Python's own bytecode cache does (by time and size): reading and
# hashing 1 MB of TOML (and loading OpenSSL for it) on every run would cost more than the rest
# of loading.
_STAMPS = f"stamps-{_RECORD_SHAPE}"
_STAMPED_ROOTS = 8  # an installed copy, a checkout, a test's folder or two
_Stamp = tuple[tuple[str, int, int, int, int], ...]


def _stamp(paths: list[Path]) -> _Stamp:
    # ctime too: no tool can set it, so an edit that restores the old mtime still shows (on
    # POSIX; Windows reports the creation time there). The inode tells a reinstalled file.
    stamps = []
    for path in paths:
        st = path.stat()
        stamps.append((path.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(stamps)


def _known_stamps() -> dict[str, tuple[_Stamp, str]]:
    known = cache.read_pickle("recipes", _STAMPS)
    return known if isinstance(known, dict) else {}


def _cache_key(digest: str) -> str:
    # Keyed by this loader's record shape too: a pickle of older records would load without
    # error and lack the new fields.
    return f"{digest}-{_RECORD_SHAPE}"


def _load_by_content(root: Path, paths: list[Path]) -> KnowledgeBase:
    """The knowledge base cached under the hash of the files' bytes (the wheel ships one), or
    parsed from them and cached."""
    import hashlib  # only when the files changed since the last run (see _stamp)

    raws = {path.name: path.read_bytes() for path in paths}
    digest = hashlib.sha256()
    for name, raw in raws.items():
        digest.update(name.encode() + b"\0" + raw)
    key = digest.hexdigest()
    cached = cache.read_pickle("recipes", _cache_key(key))
    if isinstance(cached, KnowledgeBase) and cached.digest == key:
        return cached
    kb = _parse(root, raws, key)
    cache.write_pickle("recipes", _cache_key(key), kb)
    return kb


def _parse(root: Path, raws: dict[str, bytes], digest: str) -> KnowledgeBase:
    # Only when the knowledge base changed: every other run reads the cached records.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib

    docs: dict[str, dict[str, Any]] = {}
    for name, raw in raws.items():
        try:
            docs[name] = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RecipeError(f"{root / name}: not valid TOML: {exc}") from exc

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
        root=root,
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
        framework_drivers=tuple(
            _framework_driver(r, _where("cuda.toml", "framework_driver", i, r))
            for i, r in enumerate(cuda.get("framework_driver", []))
        ),
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


def _sourced(row: dict[str, Any], where: str) -> Sourced:
    source = _str(row, "source", where).strip()
    if not source:
        raise RecipeError(f"{where}: 'source' is empty; every row cites its primary source")
    verified = row.get("verified", True)
    if not isinstance(verified, bool):
        raise RecipeError(f"{where}: 'verified' must be true or false")
    return Sourced(source=source, verified=verified, note=str(row.get("note") or ""))


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
            provenance=_sourced(row, where),
        )
    releases = [
        _release(name, row, archsets, _where(fname, "release", i, row))
        for i, row in enumerate(doc.get("release", []))
    ]
    releases.sort(key=lambda r: r.parsed_version, reverse=True)
    return Framework(name=name, releases=tuple(releases), archsets=archsets, file=fname)


_RELATED = ("torchvision", "torchaudio", "jaxlib")
# A framework whose own wheel is pure Python ships its compiled code in a companion project:
# that project's wheels carry the platform tags and, on a CUDA index, the build's local label
# (jax 0.4.18 is plain; the JAX CUDA index has jaxlib 0.4.18+cuda12.cudnn89).
PLATFORM_PROJECT = {"jax": "jaxlib"}


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
        provenance=_sourced(row, where),
    )


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
        provenance=_sourced(row, where),
    )


def _cuda_major(row: dict[str, Any], where: str) -> CudaMajor:
    return CudaMajor(
        major=int(_req(row, "major", where)),
        min_driver_linux=_str(row, "min_driver_linux", where),
        min_driver_windows=_str(row, "min_driver_windows", where),
        provenance=_sourced(row, where),
    )


def _toolkit(row: dict[str, Any], where: str) -> Toolkit:
    return Toolkit(
        version=_str(row, "version", where),
        min_driver_linux=_str(row, "min_driver_linux", where),
        min_driver_windows=_str(row, "min_driver_windows", where),
        sass=_strs(row, "sass", where),
        released=_date(row, "released", where),
        provenance=_sourced(row, where),
    )


def _driver_branches(table: Any) -> tuple[int, ...]:
    where = "cuda.toml [drivers]"
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise RecipeError(f"{where}: must be a table with 'branches' and 'source'")
    _sourced(table, where)
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
        provenance=_sourced(row, where),
        min_driver_linux=_driver(row, "min_driver_linux", where),
        min_driver_windows=_driver(row, "min_driver_windows", where),
    )


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
        provenance=_sourced(row, where),
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
        provenance=_sourced(row, where),
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
        provenance=_sourced(row, where),
        confirmed_by_nvidia=_bool(row, "confirmed_by_nvidia", where, default=True),
    )


def _bool(row: dict[str, Any], key: str, where: str, *, default: bool) -> bool:
    value = row.get(key, default)
    if not isinstance(value, bool):
        raise RecipeError(f"{where}: {key!r} must be true or false, got {value!r}")
    return value
