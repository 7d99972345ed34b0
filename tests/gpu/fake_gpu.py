"""A GPU-shaped machine for tests on machines without one: fake nvidia-smi, NVML and driver.

Two GPUs (GeForce RTX 4090, GeForce GTX 1080) on driver 535.86.05 (CUDA 12.2). The facts follow
tests/fixtures/detect/nvidia-smi/rtx4090-535.86.05.q.xml (real) and NVIDIA's published compute
capabilities; nvidia-smi's query says compute capability 6.0 for the GTX 1080 on purpose
(NVML says 6.1), so a check must report that disagreement.

Imported by name: tests/gpu/conftest.py puts this folder (and tests/detect) on sys.path.
"""

from __future__ import annotations

import _ctypes
import os
import shutil
from pathlib import Path

from detect_fakes import write_fake_smi

QUERY_CSV = (
    "0, NVIDIA GeForce RTX 4090, 0x268410DE, 24564, 535.86.05, 8.9\n"
    "1, NVIDIA GeForce GTX 1080, 0x1B8010DE, 8192, 535.86.05, 6.0\n"
)
Q_TXT = """
==============NVSMI LOG==============

Timestamp                                 : Mon Aug  7 11:10:06 2023
Driver Version                            : 535.86.05
CUDA Version                              : 12.2

Attached GPUs                             : 2
GPU 00000000:84:00.0
    Product Name                          : NVIDIA GeForce RTX 4090
    Serial Number                         : 1324020012345
    GPU UUID                              : GPU-1b2c3d4e-0000-1111-2222-333344445555
    Compute Mode                          : Default
"""
Q_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
        <driver_version>535.86.05</driver_version>
        <cuda_version>12.2</cuda_version>
        <attached_gpus>2</attached_gpus>
        <gpu id="00000000:84:00.0">
                <product_name>NVIDIA GeForce RTX 4090</product_name>
                <serial>1324020012345</serial>
                <uuid>GPU-1b2c3d4e-0000-1111-2222-333344445555</uuid>
                <pci><pci_device_id>0x268410DE</pci_device_id></pci>
        </gpu>
        <gpu id="00000000:85:00.0">
                <product_name>NVIDIA GeForce GTX 1080</product_name>
                <serial>N/A</serial>
                <uuid>GPU-99999999-0000-1111-2222-333344445555</uuid>
                <pci><pci_device_id>0x1B8010DE</pci_device_id></pci>
        </gpu>
</nvidia_smi_log>
"""
FAKE_PYNVML = """
class NVMLError(Exception):
    pass
nvmlLib = None
class _Mem:
    def __init__(self, total): self.total = total
class _Pci:
    def __init__(self, dev): self.pciDeviceId = dev
def nvmlInit(): pass
def nvmlSystemGetDriverVersion(): return b"535.86.05"
def nvmlSystemGetCudaDriverVersion_v2(): return 12020
def nvmlDeviceGetCount(): return 2
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetName(h): return ["NVIDIA GeForce RTX 4090", "NVIDIA GeForce GTX 1080"][h]
def nvmlDeviceGetCudaComputeCapability(h): return [(8, 9), (6, 1)][h]
def nvmlDeviceGetMemoryInfo(h): return _Mem([25757220864, 8589934592][h])
def nvmlDeviceGetPciInfo(h): return _Pci([0x268410DE, 0x1B8010DE][h])
def nvmlShutdown(): pass
NVML_DEVICE_ARCH_PASCAL = 4
NVML_DEVICE_ARCH_ADA = 8
def nvmlDeviceGetArchitecture(h): return [8, 4][h]
"""


def fake_gpu_env(tmp: Path) -> dict[str, str]:
    """The environment under which this process and its children see the fake GPU machine."""
    data = tmp / "smi-data"
    data.mkdir(parents=True)
    for name, text in (("query.csv", QUERY_CSV), ("q.txt", Q_TXT), ("q.xml", Q_XML)):
        (data / name).write_text(text)
    write_fake_smi(
        tmp / "bin",
        [
            {"match": ["--query-gpu"], "file": str(data / "query.csv")},
            {"match": ["-q", "-x"], "file": str(data / "q.xml")},
            {"match": ["-q"], "file": str(data / "q.txt")},
        ],
    )
    (tmp / "pynvml").mkdir()
    (tmp / "pynvml" / "pynvml.py").write_text(FAKE_PYNVML)
    (tmp / "lib").mkdir()
    # NVML's child loads the library with ctypes before asking the (fake) pynvml: any real
    # shared object will do.
    shutil.copy(_ctypes.__file__, tmp / "lib" / "libnvidia-ml.so.1")
    env = dict(os.environ)
    env["PATH"] = f"{tmp / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["LD_LIBRARY_PATH"] = str(tmp / "lib")
    env["PYTHONPATH"] = str(tmp / "pynvml")
    env.pop("GPUENV_DISABLE_NVML", None)
    return env
