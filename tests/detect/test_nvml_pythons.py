from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from gpuenv.detect import nvml, pythons
from gpuenv.detect._run import ProbeError, run

FAKE_PYNVML = """
import time
class NVMLError(Exception):
    pass
MODE = {mode!r}
nvmlLib = None
class _Mem:
    total = 25757220864
class _Pci:
    pciDeviceId = 0x268410DE
def nvmlInit():
    if MODE == "hang":
        time.sleep(30)
    if MODE == "crash":
        import os; os.abort()
    if MODE == "fail":
        raise NVMLError("Driver Not Loaded")
def nvmlSystemGetDriverVersion(): return b"535.86.05"
def nvmlSystemGetCudaDriverVersion_v2(): return 12020
def nvmlDeviceGetCount(): return 2
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetName(h): return ["NVIDIA GeForce RTX 4090", "NVIDIA GeForce GTX 1080"][h]
def nvmlDeviceGetCudaComputeCapability(h): return [(8, 9), (6, 1)][h]
def nvmlDeviceGetMemoryInfo(h): return _Mem()
def nvmlDeviceGetPciInfo(h):
    if h == 1:
        raise NVMLError("Not Supported")
    return _Pci()
def nvmlShutdown(): pass
"""


def _env_with_fake_pynvml(tmp_path: Path, mode: str) -> dict[str, str]:
    d = tmp_path / f"pynvml-{mode}"
    d.mkdir()
    (d / "pynvml.py").write_text(FAKE_PYNVML.format(mode=mode))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(d)
    env.pop(nvml.DISABLE_ENV, None)
    return env


def test_child_report_parsed(tmp_path: Path) -> None:
    env = _env_with_fake_pynvml(tmp_path, "ok")
    res = run([sys.executable, "-c", nvml.CHILD_CODE, ""], timeout=10, env=env)
    import json

    facts = nvml.parse_report(json.loads(res.stdout))
    assert facts.driver is not None
    assert (facts.driver.version, facts.driver.cuda) == ("535.86.05", "12.2")
    a, b = facts.gpus
    assert (a.index, a.name, a.compute_capability, a.memory_mib, a.pci_id) == (
        0,
        "NVIDIA GeForce RTX 4090",
        "8.9",
        24564,
        "10de:2684",
    )
    assert (b.index, b.compute_capability, b.pci_id) == (1, "6.1", None)
    assert any("GPU 1 PCI info" in n for n in facts.notes)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("hang", "did not answer within 1s"),
        ("crash", "NVML probe crashed"),
        ("fail", "Driver Not Loaded"),
    ],
)
def test_nvml_hang_crash_fail_are_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, message: str
) -> None:
    env = _env_with_fake_pynvml(tmp_path, mode)
    monkeypatch.setattr(nvml, "find_nvml_library", lambda *a: "")
    with pytest.raises(ProbeError, match=message):
        nvml.probe(1, "Linux", tmp_path, env)


def test_nvml_disabled_and_missing(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="GPUENV_DISABLE_NVML"):
        nvml.probe(1, "Linux", tmp_path, {"GPUENV_DISABLE_NVML": "1"})
    with pytest.raises(ProbeError, match="NVML library not found"):
        nvml.probe(1, "Linux", tmp_path, {})


def test_find_nvml_library_layouts(tmp_path: Path) -> None:
    wsl = tmp_path / "usr/lib/wsl/lib/libnvidia-ml.so.1"
    wsl.parent.mkdir(parents=True)
    wsl.write_text("")
    assert nvml.find_nvml_library("Linux", tmp_path, {}) == str(wsl)
    dll = tmp_path / "Windows" / "System32" / "nvml.dll"
    dll.parent.mkdir(parents=True)
    dll.write_text("")
    assert nvml.find_nvml_library(
        "Windows", tmp_path, {"WINDIR": str(tmp_path / "Windows")}
    ) == str(dll)
    assert nvml.find_nvml_library("Darwin", tmp_path, {}) is None


def test_py_launcher_lines() -> None:
    # the two layouts of `py -0p`: Python 3.11+ launcher (-V:X.Y) and older ones (-X.Y-64)
    text = (
        " -V:3.12 *        C:\\Python312\\python.exe\n -V:3.9          C:\\Python39\\python.exe\n"
    )
    old = " -3.8-64        C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python38\\python.exe\n"
    got = pythons.parse_py_launcher(text + old)
    assert [(p.version, p.source) for p in got] == [
        ("3.12", "py-launcher"),
        ("3.9", "py-launcher"),
        ("3.8", "py-launcher"),
    ]
    assert got[0].path == "C:\\Python312\\python.exe"


def test_path_pythons_and_dedupe(tmp_path: Path) -> None:
    real = tmp_path / "python3.12"
    real.write_bytes(b"\x7fELF fake")
    real.chmod(0o755)
    (tmp_path / "python3").symlink_to(real)
    shim = tmp_path / "python3.10"
    shim.write_text("#!/bin/sh\nexec pyenv ...\n")
    shim.chmod(0o755)
    found = pythons.on_path(str(tmp_path))
    assert [(p.version, Path(p.path).name) for p in found] == [
        ("3.12", "python3.12"),
        ("3.12", "python3"),
    ]
    assert len(pythons.dedupe(found)) == 1


def test_probe_here_is_fast_and_has_running_python() -> None:
    found, _ = pythons.probe(5, "Linux")
    assert found[0].source == "running" and found[0].path == sys.executable


def _fake_install(root: Path, folder: str, exe: str) -> Path:
    path = root / folder / exe
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF fake")
    return path


def test_uv_managed_pythons_read_from_uvs_folder(tmp_path: Path) -> None:
    root = tmp_path / "uvpy"
    a = _fake_install(root, "cpython-3.12.4-linux-x86_64-gnu", "bin/python3.12")
    b = _fake_install(root, "cpython-3.9.19-linux-x86_64-gnu", "bin/python3.9")
    _fake_install(root, "pypy-3.10.14-linux-x86_64-gnu", "bin/python3.10")  # not CPython
    _fake_install(root, "cpython-3.13.0+freethreaded-linux-x86_64-gnu", "bin/python3.13")
    (root / "cpython-3.11.9-linux-x86_64-gnu").mkdir()  # unfinished: no interpreter inside
    (root / ".lock").write_text("")
    found = pythons.uv_managed({"UV_PYTHON_INSTALL_DIR": str(root)}, "Linux")
    assert [(p.version, p.path, p.source) for p in found] == [
        ("3.12.4", str(a), "uv"),
        ("3.9.19", str(b), "uv"),
    ]


def test_uv_python_dir_defaults() -> None:
    assert pythons.uv_python_dir({"XDG_DATA_HOME": "/d"}, "Linux") == "/d/uv/python"
    assert pythons.uv_python_dir({"HOME": "/h"}, "Darwin") == "/h/.local/share/uv/python"
    assert pythons.uv_python_dir({"APPDATA": "/ad"}, "Windows").replace("\\", "/") == (
        "/ad/uv/data/python"
    )


def test_windows_uv_layout(tmp_path: Path) -> None:
    exe = _fake_install(tmp_path, "cpython-3.11.9-windows-x86_64-none", "python.exe")
    found = pythons.uv_managed({"UV_PYTHON_INSTALL_DIR": str(tmp_path)}, "Windows")
    assert [(p.version, p.path) for p in found] == [("3.11.9", str(exe))]


def test_pyenv_versions(tmp_path: Path) -> None:
    exe = _fake_install(tmp_path / "versions", "3.10.13", "bin/python3.10")
    _fake_install(tmp_path / "versions", "miniconda3-latest", "bin/python3.12")
    _fake_install(tmp_path / "versions", "3.12-dev", "bin/python3.12")
    found = pythons.pyenv_versions({"PYENV_ROOT": str(tmp_path)}, "Linux")
    assert [(p.version, p.path, p.source) for p in found] == [("3.10.13", str(exe), "pyenv")]


def test_unreadable_or_hostile_folders_give_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert pythons.uv_managed({"UV_PYTHON_INSTALL_DIR": str(tmp_path / "file")}, "Linux") == []
    assert pythons.uv_managed({"UV_PYTHON_INSTALL_DIR": str(tmp_path / "absent")}, "Linux") == []
    # a version folder whose "interpreter" is a folder, or a dangling link, is not one
    (tmp_path / "u" / "cpython-3.12.1-linux-x86_64-gnu" / "bin" / "python3.12").mkdir(parents=True)
    link = tmp_path / "u" / "cpython-3.11.1-linux-x86_64-gnu" / "bin" / "python3.11"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "nowhere")
    assert pythons.uv_managed({"UV_PYTHON_INSTALL_DIR": str(tmp_path / "u")}, "Linux") == []


def test_probe_starts_no_process_for_uv(tmp_path: Path) -> None:
    # a uv on PATH that would hang: detect must not run it
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\nsleep 30\n")
    uv.chmod(0o755)
    start = time.monotonic()
    pythons.probe(5, "Linux", {"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert time.monotonic() - start < 1.0
