"""Record what each GPU source answers, raw, in the fixture format of tests/fixtures/detect.

The same commands and the same child script the detect probes use, so a recording replays
through gpuenv's parsers exactly as the machine answered. Serial numbers and UUIDs are replaced
before anything is written: recordings are meant to be committed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpuenv.detect import linux, nvidia_smi, nvml
from gpuenv.detect._run import ProbeError, run

# File names inside a recording (and a promoted fixture folder).
NVML_JSON = "nvml.json"  # the NVML child's report: what nvml.parse_report reads
NVML_EXTRA_JSON = "nvml-extra.json"  # more NVML answers gpuenv does not use (yet): architecture...
SMI_QUERY = "nvidia-smi.query.csv"  # --query-gpu=FIELDS --format=csv,noheader,nounits
SMI_Q = "nvidia-smi.q.txt"  # -q -d COMPUTE: where the probe reads the CUDA version
SMI_XML = "nvidia-smi.q.xml"  # -q -x: the whole device report
PROC_VERSION = "proc-driver-version.txt"  # /proc/driver/nvidia/version
LINUX_JSON = "linux.json"  # /sys/bus/pci NVIDIA devices and /proc/driver/nvidia/gpus/*/information
RECORDING_JSON = "recording.json"  # how each file was made: argv, exit status, query fields

# Runs in a child like gpuenv.detect.nvml.CHILD_CODE: each answer on its own, never fatal.
NVML_EXTRA_CODE = r"""
import ctypes, json, sys
def s(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
out = {"gpus": [], "errors": []}
try:
    import pynvml
    if len(sys.argv) > 1 and sys.argv[1]:
        pynvml.nvmlLib = ctypes.CDLL(sys.argv[1])
    pynvml.nvmlInit()
except Exception as e:
    sys.stdout.write(json.dumps({"fatal": s(e)})); sys.exit(0)
def names(prefix):
    return {getattr(pynvml, k): k[len(prefix):] for k in dir(pynvml) if k.startswith(prefix)}
arch, brand = names("NVML_DEVICE_ARCH_"), names("NVML_BRAND_")
def ask(where, key, fn):
    try:
        where[key] = fn()
    except Exception as e:
        out["errors"].append("%s: %s" % (key, s(e)))
ask(out, "nvml_version", lambda: s(pynvml.nvmlSystemGetNVMLVersion()))
try:
    count = pynvml.nvmlDeviceGetCount()
except Exception as e:
    count = 0; out["errors"].append("device count: %s" % s(e))
for i in range(count):
    g = {"index": i}
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
    except Exception as e:
        out["errors"].append("GPU %d: %s" % (i, s(e))); continue
    a = lambda: pynvml.nvmlDeviceGetArchitecture(h)
    ask(g, "architecture", lambda: arch.get(a(), str(a())))
    ask(g, "brand", lambda: brand.get(pynvml.nvmlDeviceGetBrand(h), "?"))
    ask(g, "bus_id", lambda: s(pynvml.nvmlDeviceGetPciInfo(h).busId))
    ask(g, "multiprocessors", lambda: int(pynvml.nvmlDeviceGetAttributes(h).multiprocessorCount))
    ask(g, "mig_mode", lambda: list(pynvml.nvmlDeviceGetMigMode(h)))
    ask(g, "compute_mode", lambda: int(pynvml.nvmlDeviceGetComputeMode(h)))
    ask(g, "max_sm_clock_mhz", lambda: int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)))
    out["gpus"].append(g)
try:
    pynvml.nvmlShutdown()
except Exception:
    pass
sys.stdout.write(json.dumps(out))
"""

REDACTED = "REDACTED"
# any element or line whose name says serial or UUID (GPU, board, chassis, MIG device, ...)
_XML_PRIVATE = re.compile(r"<(\w*(?:serial|uuid)\w*)>[^<]*</\1>", re.I)
_TEXT_PRIVATE = re.compile(r"^(\s*[^:\n]*(?:Serial|UUID)[^:\n]*:\s*).*$", re.M | re.I)


def redact(text: str) -> str:
    """Serial numbers and UUIDs out of nvidia-smi and /proc text."""
    text = _XML_PRIVATE.sub(lambda m: f"<{m.group(1)}>{REDACTED}</{m.group(1)}>", text)
    return _TEXT_PRIVATE.sub(lambda m: m.group(1) + REDACTED, text)


@dataclass
class Recording:
    files: dict[str, str] = field(default_factory=dict)  # file name -> text
    commands: dict[str, dict[str, Any]] = field(default_factory=dict)  # file name -> how
    query_fields: tuple[str, ...] = nvidia_smi.FIELDS
    notes: list[str] = field(default_factory=list)
    nvml_library: Optional[str] = None
    nvidia_smi: Optional[str] = None

    @property
    def anything(self) -> bool:
        """Did any source show an NVIDIA driver or device?"""
        return bool(self.files)

    def metadata(self) -> dict[str, Any]:
        return {
            "query_fields": list(self.query_fields),
            "commands": self.commands,
            "nvml_library": self.nvml_library,
            "nvidia_smi": self.nvidia_smi,
            "notes": self.notes,
        }

    def write(self, folder: Path) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in sorted(
            {**self.files, RECORDING_JSON: json.dumps(self.metadata(), indent=2) + "\n"}.items()
        ):
            path = folder / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
        return written


def record_nvml(rec: Recording, timeout: float, root: Path, env: Mapping[str, str]) -> None:
    lib = nvml.find_nvml_library("Linux", root, env)
    rec.nvml_library = lib
    if lib is None:
        rec.notes.append("NVML: no libnvidia-ml.so.1 found")
        return
    if importlib.util.find_spec("pynvml") is None:
        rec.notes.append(
            "NVML: not recorded, this Python lacks nvidia-ml-py (scripts/gpu-check.sh --prepare"
            " brings it); nvidia-smi and /proc, /sys still are"
        )
        return
    argv = [sys.executable, "-c", "<gpuenv.detect.nvml.CHILD_CODE>", lib]
    try:
        res = run([sys.executable, "-c", nvml.CHILD_CODE, lib], timeout=timeout, env=env)
    except ProbeError as exc:
        rec.notes.append(f"NVML: {exc}")
        return
    rec.commands[NVML_JSON] = {"argv": argv, "returncode": res.returncode}
    if res.returncode != 0:
        rec.notes.append(f"NVML child exited {res.returncode}: {res.stderr.strip()[-200:]}")
    if res.stdout.strip():
        rec.files[NVML_JSON] = res.stdout if res.stdout.endswith("\n") else res.stdout + "\n"
    try:
        extra = run([sys.executable, "-c", NVML_EXTRA_CODE, lib], timeout=timeout, env=env)
    except ProbeError as exc:
        rec.notes.append(f"NVML (extra answers): {exc}")
        return
    if extra.returncode == 0 and extra.stdout.strip():
        rec.files[NVML_EXTRA_JSON] = extra.stdout.strip() + "\n"


def _smi(
    rec: Recording, exe: str, args: list[str], name: str, timeout: float, env: Mapping[str, str]
) -> Optional[str]:
    try:
        res = run([exe, *args], timeout=timeout, env=env)
    except ProbeError as exc:
        rec.notes.append(f"nvidia-smi {' '.join(args)}: {exc}")
        return None
    rec.commands[name] = {"argv": ["nvidia-smi", *args], "returncode": res.returncode}
    if res.returncode != 0:
        rec.notes.append(
            f"nvidia-smi {' '.join(args)} exited {res.returncode}: {res.output[:200]!r}"
        )
    text = res.stdout if res.returncode == 0 else res.output + "\n"
    if text.strip():
        rec.files[name] = redact(text)
    return text


def record_nvidia_smi(rec: Recording, timeout: float, root: Path, env: Mapping[str, str]) -> None:
    exe = nvidia_smi.find_nvidia_smi("Linux", root, env)
    rec.nvidia_smi = exe
    if exe is None:
        rec.notes.append("nvidia-smi: not found")
        return
    fields = nvidia_smi.FIELDS
    out = _smi(rec, exe, nvidia_smi.query_args(fields), SMI_QUERY, timeout, env)
    if out is not None and nvidia_smi.rejected_field(out) == "compute_cap":
        rec.files["nvidia-smi.query-rejected.txt"] = rec.files.pop(SMI_QUERY, out)
        rec.commands["nvidia-smi.query-rejected.txt"] = rec.commands.pop(SMI_QUERY, {})
        fields = tuple(f for f in fields if f != "compute_cap")
        _smi(rec, exe, nvidia_smi.query_args(fields), SMI_QUERY, timeout, env)
    rec.query_fields = fields
    _smi(rec, exe, ["-q", "-d", "COMPUTE"], SMI_Q, timeout, env)
    _smi(rec, exe, ["-q", "-x"], SMI_XML, timeout, env)


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def record_linux(rec: Recording, root: Path) -> None:
    version = _read(root / "proc/driver/nvidia/version")
    if version:
        rec.files[PROC_VERSION] = version
    else:
        rec.notes.append("/proc/driver/nvidia/version: absent")
    pci = [{"slot": slot, "pci_id": pci_id} for slot, pci_id in linux.pci_gpus(root)]
    info: dict[str, str] = {}
    gpus_dir = root / "proc/driver/nvidia/gpus"
    try:
        buses = sorted(os.listdir(gpus_dir))
    except OSError:
        buses = []
    for bus in buses:
        text = _read(gpus_dir / bus / "information")
        if text:
            info[bus] = redact(text)
    if pci or info:
        data = {"pci": pci, "proc_gpus_information": info}
        rec.files[LINUX_JSON] = json.dumps(data, indent=2) + "\n"
    else:
        rec.notes.append("/sys/bus/pci: no NVIDIA display device")


def record_all(
    timeout: float = 15.0, root: Path = Path("/"), environ: Optional[Mapping[str, str]] = None
) -> Recording:
    """Ask every source, each with its own timeout; failures become notes, never exceptions."""
    env = dict(os.environ if environ is None else environ)
    env.pop(nvml.DISABLE_ENV, None)
    rec = Recording()
    record_nvml(rec, timeout, root, env)
    record_nvidia_smi(rec, timeout, root, env)
    record_linux(rec, root)
    return rec
