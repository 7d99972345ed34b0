"""nvidia-smi probe: query fields (CSV), never the banner table.

R470 and older drivers reject the compute_cap field (`Field "compute_cap" is not a valid field to
query.`); then the query runs again without it and the knowledge base fills the gap later. The
highest CUDA version the driver supports only appears in `nvidia-smi -q` (text or XML).
"""

from __future__ import annotations

import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from gpuenv.detect._facts import GpuFacts, pci_id
from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import Driver, Gpu, MachineError, parse_compute_capability

FIELDS: tuple[str, ...] = (
    "index",
    "name",
    "pci.device_id",
    "memory.total",
    "driver_version",
    "compute_cap",
)
SOURCE = "nvidia-smi"

_INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')
_CUDA_Q = re.compile(r"^\s*CUDA Version\s*:\s*(\d+\.\d+)", re.MULTILINE)


def find_nvidia_smi(
    system: str, root: Path = Path("/"), environ: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """nvidia-smi on PATH first, then where drivers put it (Windows, WSL2)."""
    env = os.environ if environ is None else environ
    found = shutil.which("nvidia-smi", path=env.get("PATH", ""))
    if found:
        return found
    if system == "Windows":
        windir = env.get("WINDIR") or env.get("SystemRoot") or r"C:\Windows"
        progs = env.get("ProgramFiles") or r"C:\Program Files"
        cands = [
            Path(windir) / "System32" / "nvidia-smi.exe",
            Path(progs) / "NVIDIA Corporation" / "NVSMI" / "nvidia-smi.exe",
        ]
    elif system == "Linux":
        cands = [root / "usr/lib/wsl/lib/nvidia-smi", root / "usr/bin/nvidia-smi"]
    else:
        cands = []
    for cand in cands:
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def query_args(fields: tuple[str, ...]) -> list[str]:
    return [f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]


def rejected_field(output: str) -> Optional[str]:
    """The field name an old driver refused, if that is what the output says."""
    m = _INVALID_FIELD.search(output)
    return m.group(1) if m else None


def _value(text: str) -> Optional[str]:
    v = text.strip()
    if not v or v.startswith("[") or v.upper() in ("N/A", "[N/A]"):
        return None  # [N/A], [Not Supported], [Unknown Error]
    return v


def parse_query_csv(text: str, fields: tuple[str, ...]) -> tuple[Optional[str], tuple[Gpu, ...]]:
    """Parse `--format=csv,noheader,nounits` output into (driver version, GPUs).

    Raises ProbeError on anything that is not one row of the requested fields per GPU.
    """
    gpus: list[Gpu] = []
    drivers: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) > len(fields) and "name" in fields:
            # a comma inside the product name: glue the surplus cells back into it
            i = fields.index("name")
            extra = len(cells) - len(fields)
            cells[i : i + extra + 1] = [", ".join(cells[i : i + extra + 1])]
        if len(cells) != len(fields):
            raise ProbeError(f"nvidia-smi printed an unexpected line: {line.strip()[:80]!r}")
        row = dict(zip(fields, cells))
        name = _value(row.get("name", ""))
        index = _value(row.get("index", ""))
        if not name or index is None or not index.isdigit():
            raise ProbeError(f"nvidia-smi printed an unexpected line: {line.strip()[:80]!r}")
        gpus.append(
            Gpu(
                name=name,
                compute_capability=_cc(row.get("compute_cap")),
                memory_mib=_int(row.get("memory.total")),
                pci_id=_pci(row.get("pci.device_id")),
                source=SOURCE,
                index=int(index),
            )
        )
        drv = _value(row.get("driver_version", ""))
        if drv:
            drivers.append(drv)
    if not gpus:
        raise ProbeError("nvidia-smi listed no GPUs")
    return (drivers[0] if drivers else None), tuple(gpus)


def _cc(text: Optional[str]) -> Optional[str]:
    v = _value(text or "")
    if v is None:
        return None
    try:
        return parse_compute_capability(v)
    except MachineError:
        return None


def _int(text: Optional[str]) -> Optional[int]:
    v = _value(text or "")
    if v is None:
        return None
    v = v.split()[0]  # tolerate "24564 MiB" when units were not stripped
    return int(v) if v.isdigit() else None


def _pci(text: Optional[str]) -> Optional[str]:
    """'0x1E8710DE' (device id then vendor id) -> '10de:1e87'."""
    v = _value(text or "")
    if v is None:
        return None
    h = v.lower().removeprefix("0x")
    if len(h) != 8 or any(c not in "0123456789abcdef" for c in h):
        return None
    return pci_id(h[4:], h[:4])


def parse_cuda_version(text: str) -> Optional[str]:
    """The 'CUDA Version' of `nvidia-smi -q`, or <cuda_version> of `nvidia-smi -q -x`."""
    if text.lstrip().startswith("<?xml") or "<nvidia_smi_log" in text:
        try:
            # drop the DOCTYPE: it names a DTD file we neither have nor need
            body = re.sub(r"<!DOCTYPE[^>]*>", "", text)
            node = ET.fromstring(body.strip()).find("cuda_version")
        except ET.ParseError:
            return None
        v = (node.text or "").strip() if node is not None else ""
        return v if re.fullmatch(r"\d+\.\d+", v) else None
    m = _CUDA_Q.search(text)
    return m.group(1) if m else None


def _failure(output: str, returncode: int) -> str:
    first = next((ln.strip() for ln in output.splitlines() if ln.strip()), "")
    return f"nvidia-smi failed (exit status {returncode}): {first[:200] or 'no output'}"


def probe(
    timeout: float,
    system: str,
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
) -> GpuFacts:
    """Run nvidia-smi (query, then -q for the CUDA version), each run cut off after `timeout`."""
    exe = find_nvidia_smi(system, root, environ)
    if exe is None:
        raise ProbeError("nvidia-smi not found")
    notes: list[str] = []
    fields = FIELDS
    res = run([exe, *query_args(fields)], timeout=timeout)
    bad = rejected_field(res.output)
    if res.returncode != 0 and bad == "compute_cap":
        notes.append(
            "nvidia-smi: this driver cannot report compute_cap (R470 or older); "
            "compute capability taken from the knowledge base"
        )
        fields = tuple(f for f in FIELDS if f != "compute_cap")
        res = run([exe, *query_args(fields)], timeout=timeout)
    if res.returncode != 0:
        raise ProbeError(_failure(res.output, res.returncode))
    version, gpus = parse_query_csv(res.stdout, fields)
    cuda = None
    try:
        q = run([exe, "-q", "-d", "COMPUTE"], timeout=timeout)
        cuda = parse_cuda_version(q.stdout) if q.returncode == 0 else None
    except ProbeError as exc:
        notes.append(f"max CUDA version unknown: {exc}")
    else:
        if cuda is None:
            notes.append("nvidia-smi -q did not report the driver's CUDA version")
    driver = Driver(version=version, cuda=cuda) if version else None
    return GpuFacts(driver=driver, gpus=gpus, notes=tuple(notes))
