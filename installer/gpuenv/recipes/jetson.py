"""Jetson (recipes/jetson.toml): which Tegra GPUs run which CUDA wheels, and the JetPack
release a Tegra "driver version" names. Records, their strict parser, the look-ups (by compute
capability, device-tree compatible and driver string) and the cross-checks `recipes check` runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from gpuenv.machine import l4t_release
from gpuenv.recipes.model import RecipeError, Sourced

JETSON_FILE = "jetson.toml"
CUDA_WHEELS = ("jetson", "sbsa")  # NVIDIA's builds for the JetPack | the server-Arm wheels
_TOP = {"schema", "soc", "jetpack"}
_SOC_ROW = {"name", "compute_capability", "cuda_wheels", "compatible", "source", "verified", "note"}
_JETPACK_ROW = {"version", "l4t", "cuda", "socs", "drivers", "builds", "source", "verified", "note"}
_VERSION = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class TegraSoc:
    """A Tegra GPU (by compute capability) and the CUDA wheels it runs."""

    name: str
    compute_capability: str
    cuda_wheels: str  # jetson | sbsa
    provenance: Sourced
    compatible: Optional[str] = None  # the SoC's device-tree compatible, "nvidia,tegra234"


@dataclass(frozen=True)
class JetPack:
    """A JetPack release line: its Jetson Linux releases, CUDA, boards and driver strings."""

    version: str
    l4t: tuple[str, ...]
    cuda: str
    socs: tuple[str, ...]
    drivers: tuple[str, ...]  # what nvidia-smi prints as "Driver Version" there
    builds: str  # where the frameworks' builds for it come from (advice)
    provenance: Sourced


@dataclass(frozen=True)
class JetsonTable:
    """recipes/jetson.toml."""

    socs: tuple[TegraSoc, ...] = ()
    jetpacks: tuple[JetPack, ...] = ()

    def soc_for(self, compute_capability: str) -> Optional[TegraSoc]:
        return next((s for s in self.socs if s.compute_capability == compute_capability), None)

    def soc_for_compatible(self, compatible: tuple[str, ...]) -> Optional[TegraSoc]:
        """The Tegra GPU of a board by its device tree's compatible strings."""
        return next((s for s in self.socs if s.compatible and s.compatible in compatible), None)

    def jetpacks_for(self, driver: str, soc: str) -> tuple[JetPack, ...]:
        """The JetPack releases of this SoC that a driver string names: an L4T release (r36.4,
        or a dotted version below 100: JetPack 5's /proc gives 35.3.1), else nvidia-smi's
        driver string as recorded (540.4.0)."""
        rows = [j for j in self.jetpacks if soc in j.socs]
        l4t = l4t_release(driver)
        if l4t is not None:
            return tuple(j for j in rows if any(_within(l4t, known) for known in j.l4t))
        return tuple(j for j in rows if driver.strip() in j.drivers)

    def problems(
        self, gpu_ccs: set[str], toolkit_known: Callable[[str], bool]
    ) -> list[tuple[str, str, str]]:
        """(level, where, message) for `recipes check`: each Tegra GPU is one gpus.toml knows,
        each JetPack's CUDA one cuda.toml records (the parser checked the file's own shape)."""
        out = [
            (
                "error",
                f"{JETSON_FILE} soc {s.name}",
                f"no gpus.toml row has compute capability {s.compute_capability}",
            )
            for s in self.socs
            if s.compute_capability not in gpu_ccs
        ]
        out += [
            (
                "warning",
                f"{JETSON_FILE} jetpack {j.version}",
                f"CUDA {j.cuda} has no cuda.toml toolkit row",
            )
            for j in self.jetpacks
            if not toolkit_known(j.cuda)
        ]
        return out


def _within(query: tuple[int, ...], known: str) -> bool:
    """r36.4 names 36.4.0, 36.4.3 and 36.4.4; 35.3.1 names 35.3.1 alone; 36.4 names 36.4.0."""
    parts = tuple(int(p) for p in known.split("."))
    padded = parts + (0,) * (len(query) - len(parts))
    return padded[: len(query)] == query


def parse_jetson(doc: dict[str, Any]) -> JetsonTable:
    """jetson.toml, strict about keys and types (a misspelt key would silently drop a rule)."""
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise RecipeError(f"{JETSON_FILE}: unknown top-level key(s) {', '.join(unknown)}")
    if doc.get("schema") != 1:
        raise RecipeError(f"{JETSON_FILE}: schema = {doc.get('schema')!r}, expected 1")
    socs = tuple(_soc(row, _where("soc", i, row)) for i, row in enumerate(_rows(doc, "soc")))
    names = {s.name for s in socs}
    jetpacks = tuple(
        _jetpack(row, _where("jetpack", i, row), names)
        for i, row in enumerate(_rows(doc, "jetpack"))
    )
    return JetsonTable(socs=socs, jetpacks=jetpacks)


def _rows(doc: dict[str, Any], table: str) -> list[dict[str, Any]]:
    rows = doc.get(table, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise RecipeError(f"{JETSON_FILE}: {table!r} must be an array of [[{table}]] tables")
    return rows


def _where(table: str, index: int, row: dict[str, Any]) -> str:
    label = row.get("name") or row.get("version")
    return f"{JETSON_FILE} [[{table}]] #{index + 1}" + (f" ({label})" if label else "")


def _soc(row: dict[str, Any], where: str) -> TegraSoc:
    _keys(row, _SOC_ROW, where)
    cc = _text(row, "compute_capability", where)
    if not re.fullmatch(r"\d+\.\d", cc):
        raise RecipeError(f"{where}: compute_capability {cc!r} is not X.Y")
    wheels = _text(row, "cuda_wheels", where)
    if wheels not in CUDA_WHEELS:
        raise RecipeError(f"{where}: cuda_wheels {wheels!r} is not one of {', '.join(CUDA_WHEELS)}")
    compatible = _text(row, "compatible", where) if "compatible" in row else None
    return TegraSoc(_text(row, "name", where), cc, wheels, _sourced(row, where), compatible)


def _jetpack(row: dict[str, Any], where: str, socs: set[str]) -> JetPack:
    _keys(row, _JETPACK_ROW, where)
    l4t = _texts(row, "l4t", where, required=True)
    for each in l4t:
        if l4t_release(each) is None:
            raise RecipeError(f"{where}: l4t {each!r} is not a Jetson Linux release like 36.4.3")
    boards = _texts(row, "socs", where, required=True)
    for board in boards:
        if board not in socs:
            raise RecipeError(f"{where}: socs names {board!r}, which no [[soc]] row is")
    cuda = _text(row, "cuda", where)
    drivers = _texts(row, "drivers", where, required=False)
    for text in (cuda, *drivers):
        if not _VERSION.fullmatch(text):
            raise RecipeError(f"{where}: {text!r} is not a dotted version")
    return JetPack(
        version=_text(row, "version", where),
        l4t=l4t,
        cuda=cuda,
        socs=boards,
        drivers=drivers,
        builds=_text(row, "builds", where),
        provenance=_sourced(row, where),
    )


def _keys(row: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(row) - allowed)
    if unknown:
        raise RecipeError(f"{where}: unknown key(s) {', '.join(unknown)}")


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RecipeError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value.strip()


def _texts(row: dict[str, Any], key: str, where: str, *, required: bool) -> tuple[str, ...]:
    value = row.get(key, None if required else [])
    if not isinstance(value, list) or (required and not value):
        raise RecipeError(f"{where}: {key!r} must be a non-empty list of strings")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise RecipeError(f"{where}: {key!r} must hold non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def _sourced(row: dict[str, Any], where: str) -> Sourced:
    """As every table's, and stricter: an unverified row says why here, not only in `check`."""
    sourced = Sourced.from_row(row, where)
    if not sourced.verified and not sourced.note.strip():
        raise RecipeError(f"{where}: verified = false needs a note saying what is uncertain")
    return sourced
