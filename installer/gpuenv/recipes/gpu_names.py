"""GPU names: the look-up of a detected or typed name (or a PCI id) in NVIDIA's tables, and the
errors that say which GPUs a vague or shared name could mean."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gpuenv.machine import cc_tuple
from gpuenv.recipes.model import GpuRecord


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
class GpuNames:
    """The knowledge base's GPU records looked up by PCI id, by name, and by the names people
    type; the name tables are built once per knowledge base (and pickled with it)."""

    gpus: tuple[GpuRecord, ...]
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
        names = {normalize_gpu_name(h.name) for h in hits}  # "SUPER" and "Super" are one
        if not exact and not _has_model_number(words) and len(names) > 1:
            # too vague: "RTX" fits hundreds; a part that fits one GPU ("Jetson Thor") is it
            raise AmbiguousGpuName(text, tuple(hits))
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
