"""NVML (nvidia-ml-py) probe.

NVML's init can hang (a wedged driver) or crash the process (a broken install), so the queries run
in a child interpreter with a timeout; the parent only parses the JSON it prints. The child is only
started when an NVML library file is present, so machines without NVIDIA software pay nothing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from gpuenv.detect._facts import GpuFacts, cuda_from_int, pci_id
from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import Driver, Gpu

DISABLE_ENV = "GPUENV_DISABLE_NVML"
SOURCE = "NVML"

_LINUX_DIRS = (
    "usr/lib/wsl/lib",  # WSL2: the Windows driver's libraries
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib64",
    "usr/lib",
    "usr/local/nvidia/lib64",  # NVIDIA container runtime
    "usr/local/nvidia/lib",
    "run/opengl-driver/lib",  # NixOS
)

# Runs in the child: stdlib and pynvml only. argv[1]: the library to load ("" = pynvml's default).
CHILD_CODE = r"""
import ctypes, json, sys
def say(obj):
    sys.stdout.write(json.dumps(obj)); sys.stdout.flush()
def s(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
try:
    import pynvml
except Exception as e:
    say({"fatal": "nvidia-ml-py (pynvml) is not installed: %s" % e}); sys.exit(0)
lib = sys.argv[1] if len(sys.argv) > 1 else ""
if lib:
    try:
        pynvml.nvmlLib = ctypes.CDLL(lib)
    except OSError as e:
        say({"fatal": "could not load %s: %s" % (lib, e)}); sys.exit(0)
try:
    pynvml.nvmlInit()
except Exception as e:
    say({"fatal": "nvmlInit failed: %s" % s(e)}); sys.exit(0)
out = {"gpus": [], "errors": []}
try:
    out["driver"] = s(pynvml.nvmlSystemGetDriverVersion())
except Exception as e:
    out["errors"].append("driver version: %s" % s(e))
for fn in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
    try:
        out["cuda"] = int(getattr(pynvml, fn)()); break
    except Exception as e:
        out["errors"].append("%s: %s" % (fn, s(e)))
try:
    count = pynvml.nvmlDeviceGetCount()
except Exception as e:
    count = 0; out["errors"].append("device count: %s" % s(e))
for i in range(count):
    g = {"index": i}
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        g["name"] = s(pynvml.nvmlDeviceGetName(h))
    except Exception as e:
        out["errors"].append("GPU %d: %s" % (i, s(e))); continue
    try:
        g["cc"] = "%d.%d" % tuple(pynvml.nvmlDeviceGetCudaComputeCapability(h))
    except Exception as e:
        out["errors"].append("GPU %d compute capability: %s" % (i, s(e)))
    try:
        g["memory"] = int(pynvml.nvmlDeviceGetMemoryInfo(h).total)
    except Exception as e:
        out["errors"].append("GPU %d memory: %s" % (i, s(e)))
    try:
        g["pci"] = int(pynvml.nvmlDeviceGetPciInfo(h).pciDeviceId)
    except Exception as e:
        out["errors"].append("GPU %d PCI info: %s" % (i, s(e)))
    out["gpus"].append(g)
try:
    pynvml.nvmlShutdown()
except Exception:
    pass
say(out)
"""


def find_nvml_library(
    system: str, root: Path = Path("/"), environ: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """The NVML library file for this OS, or None when there is none (no NVIDIA driver)."""
    env = os.environ if environ is None else environ
    if system == "Windows":
        windir = env.get("WINDIR") or env.get("SystemRoot") or r"C:\Windows"
        progs = env.get("ProgramFiles") or r"C:\Program Files"
        for cand in (
            Path(windir) / "System32" / "nvml.dll",
            Path(progs) / "NVIDIA Corporation" / "NVSMI" / "nvml.dll",
        ):
            if cand.is_file():
                return str(cand)
        return None
    if system != "Linux":
        return None
    dirs = [root / d for d in _LINUX_DIRS]
    dirs += [Path(p) for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    for d in dirs:
        cand = d / "libnvidia-ml.so.1"
        if cand.exists():
            return str(cand)
    return None


def parse_report(data: Any) -> GpuFacts:
    """The child's JSON -> driver, GPUs and notes. Raises ProbeError on a fatal report."""
    if not isinstance(data, dict):
        raise ProbeError("NVML probe printed something that is not a report")
    if data.get("fatal"):
        raise ProbeError(f"NVML: {data['fatal']}")
    driver = None
    if data.get("driver"):
        cuda = data.get("cuda")
        driver = Driver(
            version=str(data["driver"]),
            cuda=cuda_from_int(int(cuda)) if isinstance(cuda, int) else None,
        )
    gpus: list[Gpu] = []
    for g in data.get("gpus") or []:
        pci = g.get("pci")
        mem = g.get("memory")
        gpus.append(
            Gpu(
                name=str(g["name"]),
                compute_capability=g.get("cc"),
                memory_mib=int(mem) // (1024 * 1024) if isinstance(mem, int) else None,
                pci_id=pci_id(f"{pci & 0xFFFF:04x}", f"{pci >> 16:04x}")
                if isinstance(pci, int)
                else None,
                source=SOURCE,
                index=int(g.get("index", len(gpus))),
            )
        )
    notes = tuple(f"NVML: {e}" for e in data.get("errors") or [] if "_v2" not in e)
    return GpuFacts(driver=driver, gpus=tuple(gpus), notes=notes)


def probe(
    timeout: float,
    system: str,
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
    python: Optional[str] = None,
) -> GpuFacts:
    """Ask NVML, in a child interpreter cut off after `timeout` seconds."""
    env = os.environ if environ is None else environ
    if env.get(DISABLE_ENV):
        raise ProbeError(f"NVML probe skipped ({DISABLE_ENV} is set)")
    lib = find_nvml_library(system, root, env)
    if lib is None:
        raise ProbeError("NVML library not found (no NVIDIA driver installed?)")
    res = run([python or sys.executable, "-c", CHILD_CODE, lib], timeout=timeout, env=env)
    if res.returncode != 0:
        tail = res.stderr.strip().splitlines()[-1:] or [f"exit status {res.returncode}"]
        raise ProbeError(f"NVML probe crashed: {tail[0]}")
    try:
        data = json.loads(res.stdout)
    except json.JSONDecodeError:
        raise ProbeError("NVML probe printed no report") from None
    return parse_report(data)
