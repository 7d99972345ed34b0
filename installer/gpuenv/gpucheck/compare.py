"""Compare what NVML, nvidia-smi, /proc and /sys, gpuenv detect and the knowledge base say.

Pure: recorded text in, findings out. Each source is parsed by gpuenv's own parsers (so a
recording that gpuenv misreads shows up here as a disagreement), then every fact (driver
version, the driver's CUDA version, the GPUs, each GPU's name, PCI id, compute capability and
memory) is set side by side.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from gpuenv.detect import linux, nvidia_smi, nvml
from gpuenv.detect._facts import PLACEHOLDER_NAME
from gpuenv.detect._run import ProbeError
from gpuenv.gpucheck import record
from gpuenv.machine import Gpu, Machine, MachineError


class KbRow(NamedTuple):
    """A GPU as the knowledge base knows it."""

    compute_capability: str
    name: str
    architecture: str = ""


# The knowledge base, as the check needs it: the GPU by PCI id / by name, and the newest CUDA a
# driver version runs according to the toolkit table.
KbGpu = Callable[[str], Optional[KbRow]]
KbCuda = Callable[[str], Optional[str]]
# NVML's architecture names (NVML_DEVICE_ARCH_*) as recipes/gpus.toml spells them
_ARCH_NAMES = {"ADA": "Ada Lovelace"}

AGREE, DIFFER, UNKNOWN = "agree", "differ", "unknown"


@dataclass(frozen=True)
class View:
    """What one source says: driver, its CUDA, the GPUs (in the source's order)."""

    source: str
    driver: Optional[str] = None
    cuda: Optional[str] = None
    gpus: tuple[Gpu, ...] = ()
    error: Optional[str] = None


@dataclass(frozen=True)
class Finding:
    topic: str  # "driver version", "GPU 0 compute capability", ...
    status: str  # agree | differ | unknown
    values: dict[str, str] = field(default_factory=dict)  # source -> value (sources that said)
    note: str = ""

    @property
    def problem(self) -> bool:
        return self.status == DIFFER

    def line(self) -> str:
        said = ", ".join(f"{src} {val}" for src, val in self.values.items())
        if self.status == AGREE:
            value = next(iter(self.values.values()))
            text = f"{self.topic}: {value} ({', '.join(self.values)} agree)"
        elif self.status == DIFFER:
            text = f"{self.topic}: DIFFER: {said}"
        else:
            text = f"{self.topic}: unknown{': ' + said if said else ''}"
        return f"{text}; {self.note}" if self.note else text

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "status": self.status,
            "values": self.values,
            "note": self.note,
        }


def nvml_view(files: Mapping[str, str]) -> View:
    text = files.get(record.NVML_JSON)
    if text is None:
        return View("NVML", error="no answer recorded")
    try:
        facts = nvml.parse_report(json.loads(text))
    except (ValueError, ProbeError, KeyError, TypeError) as exc:
        return View("NVML", error=str(exc))
    drv = facts.driver
    return View("NVML", drv.version if drv else None, drv.cuda if drv else None, facts.gpus)


def smi_view(files: Mapping[str, str], fields: tuple[str, ...]) -> View:
    text = files.get(record.SMI_QUERY)
    if text is None:
        return View("nvidia-smi", error="no answer recorded")
    try:
        driver, gpus = nvidia_smi.parse_query_csv(text, fields)
    except ProbeError as exc:
        return View("nvidia-smi", error=str(exc))
    cuda = nvidia_smi.parse_cuda_version(files.get(record.SMI_Q, ""))
    return View("nvidia-smi", driver, cuda, gpus)


def smi_xml_view(files: Mapping[str, str]) -> View:
    """`nvidia-smi -q -x`: driver, CUDA version, product names and PCI ids."""
    text = files.get(record.SMI_XML)
    if text is None:
        return View("nvidia-smi -q -x", error="no answer recorded")
    try:
        root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", text).strip())
    except ET.ParseError as exc:
        return View("nvidia-smi -q -x", error=f"not XML: {exc}")
    gpus = []
    for i, node in enumerate(root.findall("gpu")):
        pci = (node.findtext("pci/pci_device_id") or "").strip()
        gpus.append(
            Gpu(
                name=(node.findtext("product_name") or "").strip(),
                compute_capability=None,
                pci_id=nvidia_smi._pci(pci) if pci else None,
                index=i,
            )
        )
    return View(
        "nvidia-smi -q -x",
        (root.findtext("driver_version") or "").strip() or None,
        nvidia_smi.parse_cuda_version(text),
        tuple(gpus),
    )


def nvml_architectures(files: Mapping[str, str]) -> dict[int, str]:
    """GPU index -> architecture from the extra NVML answers (empty when there are none)."""
    try:
        data = json.loads(files.get(record.NVML_EXTRA_JSON) or "{}")
    except ValueError:
        return {}
    out = {}
    for g in data.get("gpus") or [] if isinstance(data, dict) else []:
        arch, index = g.get("architecture"), g.get("index")
        if isinstance(arch, str) and isinstance(index, int):
            out[index] = _ARCH_NAMES.get(arch.upper(), arch.title())
    return out


def linux_view(files: Mapping[str, str]) -> View:
    """/proc/driver/nvidia (driver, models) and /sys/bus/pci (PCI ids), in bus order."""
    proc = files.get(record.PROC_VERSION)
    driver = linux.parse_proc_driver_version(proc) if proc else None
    try:
        data = json.loads(files.get(record.LINUX_JSON) or "{}")
    except ValueError as exc:
        return View("/proc+/sys", driver, error=f"{record.LINUX_JSON}: {exc}")
    models = {}
    for bus, text in (data.get("proc_gpus_information") or {}).items():
        m = re.search(r"^Model:\s*(.+?)\s*$", str(text), re.M)
        if m:
            models[str(bus).lower()] = m.group(1)
    gpus = []
    for i, dev in enumerate(data.get("pci") or []):
        slot = str(dev.get("slot", "")).lower()
        gpus.append(
            Gpu(
                name=models.get(slot, ""),
                compute_capability=None,
                pci_id=dev.get("pci_id"),
                index=i,
            )
        )
    if not gpus and driver is None:
        return View("/proc+/sys", error="no NVIDIA driver or device")
    return View("/proc+/sys", driver, None, tuple(gpus))


def machine_view(source: str, text: Optional[str]) -> View:
    if not text:
        return View(source, error="no output")
    try:
        machine = Machine.from_json(json.loads(text))
    except (ValueError, MachineError, KeyError, TypeError) as exc:
        return View(source, error=f"not a Machine: {exc}")
    drv = machine.driver
    return View(source, drv.version if drv else None, drv.cuda if drv else None, machine.gpus)


def _finding(topic: str, values: Mapping[str, Optional[str]], note: str = "") -> Finding:
    said = {k: v for k, v in values.items() if v}
    if not said:
        return Finding(topic, UNKNOWN, {}, note or "no source told")
    status = AGREE if len(set(said.values())) == 1 else DIFFER
    return Finding(topic, status, said, note)


def compare(
    views: list[View],
    kb_by_pci: Optional[KbGpu] = None,
    kb_by_name: Optional[KbGpu] = None,
    kb_cuda: Optional[KbCuda] = None,
    architectures: Optional[Mapping[int, str]] = None,
) -> list[Finding]:
    """Every fact, side by side across the sources that answered (and the knowledge base)."""
    live = [v for v in views if v.error is None]
    out = [_finding("driver version", {v.source: v.driver for v in live})]
    cuda = {v.source: v.cuda for v in live}
    out.append(_finding("driver's CUDA version", cuda))
    driver = next((v.driver for v in live if v.driver), None)
    if kb_cuda is not None and driver:
        implied = kb_cuda(driver)
        reported = next((c for c in cuda.values() if c), None)
        if reported:
            out.append(
                _finding(
                    "driver's CUDA version vs knowledge base",
                    {"driver": reported, "toolkit table": implied},
                    "" if implied else f"no toolkit in recipes/cuda.toml lists driver {driver}",
                )
            )
    counts = {v.source: str(len(v.gpus)) for v in live}
    out.append(_finding("number of GPUs", counts))
    for i in range(max((len(v.gpus) for v in live), default=0)):
        at = {v.source: v.gpus[i] for v in live if i < len(v.gpus)}
        out.append(_finding(f"GPU {i} name", {s: g.name for s, g in at.items()}))
        out.append(_finding(f"GPU {i} PCI id", {s: g.pci_id for s, g in at.items()}))
        mem = {s: str(g.memory_mib) if g.memory_mib else None for s, g in at.items()}
        out.append(_finding(f"GPU {i} memory MiB", mem))
        cc: dict[str, Optional[str]] = {s: g.compute_capability for s, g in at.items()}
        pci = next((g.pci_id for g in at.values() if g.pci_id), None)
        name = next(
            (g.name for g in at.values() if g.name and not g.name.startswith(PLACEHOLDER_NAME)),
            None,
        )
        note = []
        arch: dict[str, Optional[str]] = {"NVML": (architectures or {}).get(i)}
        if kb_by_pci is not None and pci:
            hit = kb_by_pci(pci)
            cc["knowledge base (PCI id)"] = hit.compute_capability if hit else None
            arch["knowledge base (PCI id)"] = hit.architecture if hit else None
            if hit is None:
                note.append(f"PCI id {pci} is not in recipes/gpus.toml")
        if kb_by_name is not None and name:
            hit = kb_by_name(name)
            cc["knowledge base (name)"] = hit.compute_capability if hit else None
            if hit is None:
                note.append(f"name {name!r} is not in recipes/gpus.toml")
        out.append(_finding(f"GPU {i} compute capability", cc, "; ".join(note)))
        if arch["NVML"]:
            out.append(_finding(f"GPU {i} architecture", arch))
    return out


def views_of(
    files: Mapping[str, str], fields: tuple[str, ...], machines: Mapping[str, Optional[str]]
) -> list[View]:
    """All views: the recorded sources, then each `gpuenv detect --json` output by label."""
    views = [nvml_view(files), smi_view(files, fields), smi_xml_view(files), linux_view(files)]
    views += [machine_view(label, text) for label, text in machines.items()]
    return views
