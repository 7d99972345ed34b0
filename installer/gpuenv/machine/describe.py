"""Machines described rather than detected: `--gpu NAME|CC --driver VER --os ... --arch ...`.

Lab admins resolve and lock for machines they are not sitting at; CI locks for Windows from
Linux. Anything not described is taken from nothing (no GPU, no driver), never from the machine
gpuenv happens to run on, except the CPU architecture default.
"""

from __future__ import annotations

import platform as _platform
from typing import TYPE_CHECKING, Optional

from gpuenv.machine import (
    Driver,
    Gpu,
    Machine,
    MachineError,
    OSInfo,
    cc_tuple,
    check_driver_text,
    conda_platform,
    normalize_arch,
    parse_compute_capability,
    parse_driver_version,
)
from gpuenv.recipes import AmbiguousGpu, KnowledgeBase, major_minor
from gpuenv.recipes.gpu_lookup import (
    DESCRIBED_GPU_SOURCE,
    cc_only_name,
    described_pci_id,
    lookup_gpu,
)
from gpuenv.versions import version_key

if TYPE_CHECKING:
    from pathlib import Path

OS_CHOICES = ("linux", "windows", "wsl", "macos")
# What people write for each family (`--os win10`): gpuenv plans by family, so a release or a
# distribution names its family, and the command line says which it took
OS_ALIASES = {
    **dict.fromkeys(
        ("win", "win10", "win11", "windows10", "windows11", "windows 10", "windows 11"), "windows"
    ),
    **dict.fromkeys(
        ("ubuntu", "debian", "fedora", "rhel", "centos", "rocky", "arch", "linux64"), "linux"
    ),
    **dict.fromkeys(("wsl2", "wsl 2"), "wsl"),
    **dict.fromkeys(("mac", "macosx", "osx", "darwin"), "macos"),
}


def os_family(text: str) -> tuple[str, Optional[str]]:
    """(the OS family `text` names, a note when it was an alias); MachineError when none."""
    key = text.strip().lower()
    if key in OS_CHOICES:
        return key, None
    family = OS_ALIASES.get(key)
    if family is None:
        raise MachineError(
            f"--os {text!r}: expected one of {', '.join(OS_CHOICES)} (or a name such as win10,"
            " win11, ubuntu, wsl2, macosx)"
        )
    return family, f"--os {text}: planned for {family} (gpuenv plans for the OS family)"


MAX_MACHINE_FILE_BYTES = 1 << 20  # `gpuenv detect --json` writes a few kilobytes


def load_machine_file(path: Path) -> Machine:
    """A Machine JSON file: a regular UTF-8 file of bounded size, never a pipe or a device."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        raw = read_bounded(path, MAX_MACHINE_FILE_BYTES, "machine file")
    except UnsafePathError as exc:
        raise MachineError(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MachineError(f"machine file {path}: not UTF-8 text ({exc.reason})") from exc
    return Machine.loads(text)


def describe_machine(
    kb: KnowledgeBase,
    *,
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
) -> Machine:
    """A Machine from command-line flags; the GPU may be a name or a compute capability."""
    os_key, _ = os_family(os_name or "linux")
    family = "linux" if os_key == "wsl" else os_key
    default_arch = "arm64" if family == "macos" else _platform.machine() or "x86_64"
    cpu = normalize_arch(arch or default_arch)
    notes: list[str] = []
    gpus: tuple[Gpu, ...] = ()
    if gpu:
        gpus = (_describe_gpu(kb, gpu),)
    soc = kb.jetson.soc_for(gpus[0].compute_capability or "") if gpus else None
    if soc is not None and arch is None and family == "linux":
        cpu = "aarch64"  # a Jetson's GPU is part of an aarch64 board
    drv: Optional[Driver] = None
    if driver:
        drv = Driver(version=check_driver_text(driver))
    elif soc is not None and family == "linux":
        newest = [j for j in kb.jetson.jetpacks if soc.name in j.socs]
        if newest:
            drv = Driver(version="r" + newest[-1].l4t[-1])
            notes.append(
                f"no --driver given: planned for JetPack {newest[-1].version} (Jetson Linux"
                f" {newest[-1].l4t[-1]}), the newest recorded for {soc.name}; pass --driver with"
                " the board's release (the first line of /etc/nv_tegra_release, e.g. r36.4)"
            )
    elif gpus and family != "macos":
        found = _assumed_driver(kb, gpus[0], windows=family == "windows" or os_key == "wsl")
        if found:
            assumed, toolkit = found
            drv = Driver(version=assumed)
            # the newest CUDA this GPU runs, and the driver it needs: not the newest driver
            notes.append(
                f"no --driver given: planned for driver {assumed}, CUDA {toolkit}'s own"
                f" minimum (CUDA {toolkit} is the newest CUDA this GPU runs); with an older"
                " driver, pass --driver (read it with nvidia-smi, or in Windows' Device Manager)"
            )
    if family == "macos" and gpus:
        raise MachineError("--gpu with --os macos: NVIDIA GPUs have no CUDA support on macOS")
    return Machine(
        os=OSInfo(
            family=family,
            name={"windows": "Windows", "wsl": "WSL2", "macos": "macOS"}.get(os_key, "Linux"),
            wsl=os_key == "wsl",
        ),
        arch=cpu,
        platform=conda_platform(family, cpu),
        glibc=None,
        driver=drv,
        gpus=gpus,
        notes=tuple(notes),
    )


def _describe_gpu(kb: KnowledgeBase, text: str) -> Gpu:
    try:
        cc = parse_compute_capability(text)
    except MachineError:
        return _described_by_name(kb, text)
    real = sorted({c for g in kb.generations for c in g.compute_capabilities}, key=cc_tuple)
    if cc not in real:
        # "970" reads as compute capability 97.0, which nothing has: the GTX 970 was meant.
        if text.strip().isdigit() and _names_a_gpu(kb, text):
            return _described_by_name(kb, text)
        # "940" is no model name either, but the start of some (940M, 940MX): name them
        models = _models_starting(kb, text.strip()) if text.strip().isdigit() else []
        if models:
            raise MachineError(
                f"--gpu {text}: no GPU is named {text.strip()}, and {cc} is no compute capability;"
                f" did you mean {_either(models)}?"
            )
        # 9.9 or 7.7 shares a major with real GPUs, yet no NVIDIA GPU has it: say which do.
        below = [c for c in real if cc_tuple(c) < cc_tuple(cc)][-1:]
        above = [c for c in real if cc_tuple(c) > cc_tuple(cc)][:1]
        nearest = " and ".join(below + above)
        raise MachineError(
            f"--gpu {text}: compute capability {cc} belongs to no known GPU generation: no"
            f" NVIDIA GPU in gpuenv's tables has it (nearest that exist: {nearest})"
        )
    return Gpu(name=cc_only_name(cc), compute_capability=cc, source="described (--gpu)")


def _models_starting(kb: KnowledgeBase, digits: str) -> list[str]:
    """GPU names with a model number of `digits` and a suffix (940 -> GeForce 940M, 940MX)."""
    found: dict[str, None] = {}
    for record in kb.gpus:
        for token in record.name.split():
            if token.startswith(digits) and token[len(digits) :].isalpha():
                found[record.name] = None
    return sorted(found)[:6]


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _names_a_gpu(kb: KnowledgeBase, text: str) -> bool:
    try:
        return kb.match_typed_gpu(text) is not None
    except AmbiguousGpu:  # it does, several: _described_by_name says which
        return True


def _described_by_name(kb: KnowledgeBase, text: str) -> Gpu:
    record = lookup_gpu(kb, text, typed=True)
    pci_id = described_pci_id(kb, text, record)
    match = None if pci_id else kb.match_typed_gpu(text)
    return Gpu(
        # A text that names several GPUs of one compute capability ("A100") stays as typed:
        # the plan is for any of them, and says which they are.
        name=" ".join(text.split()) if match and match.alternatives else record.name,
        compute_capability=record.compute_capability,
        pci_id=pci_id,
        source=DESCRIBED_GPU_SOURCE,
    )


def _assumed_driver(kb: KnowledgeBase, gpu: Gpu, *, windows: bool) -> Optional[tuple[str, str]]:
    """The driver of the newest CUDA toolkit this GPU's generation still runs (that toolkit's
    own minimum driver), and that toolkit's version."""
    gen = kb.generation_for(gpu.compute_capability) if gpu.compute_capability else None
    key = "min_driver_windows" if windows else "min_driver_linux"
    best: Optional[str] = None
    best_toolkit = ""
    for toolkit in kb.toolkits.values():
        value = str(getattr(toolkit, key))
        if (
            gen
            and gen.max_cuda
            and version_key(major_minor(toolkit.version)) > version_key(gen.max_cuda)
        ):
            continue
        if best is None or parse_driver_version(value) > parse_driver_version(best):
            best, best_toolkit = value, major_minor(toolkit.version)
    return (best, best_toolkit) if best else None


def check_flag_text(flag: str, value: Optional[str]) -> None:
    """A described machine's flag is either absent or says something: never empty, never a
    control character (a pasted newline), so nothing typed is silently read as "no GPU"."""
    if value is None:
        return
    if not value.strip():
        raise MachineError(
            f"{flag} is empty; give a value or leave {flag} out"
            + (" (no --gpu: a machine without an NVIDIA GPU)" if flag == "--gpu" else "")
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise MachineError(f"{flag} {value!r} contains a control character (a pasted newline?)")


def machine_from_options(
    kb: KnowledgeBase,
    *,
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
) -> Machine:
    """The machine a command (or the API) plans for: a Machine file, a description by flags, or
    (neither) this machine, detected. Both, or an empty or garbled flag, is a MachineError."""
    for flag, value in (("--gpu", gpu), ("--driver", driver), ("--arch", arch)):
        check_flag_text(flag, value)
    described = any(v is not None for v in (gpu, driver, os_name, arch))
    if machine_file is not None:
        if described:
            raise MachineError("--machine and --gpu/--driver/--os/--arch exclude each other")
        return load_machine_file(machine_file)
    if described:
        return describe_machine(kb, gpu=gpu, driver=driver, os_name=os_name, arch=arch)
    from gpuenv.detect import detect_machine  # only when observing this machine

    return detect_machine()


def host_platform() -> str:
    """This machine's conda platform (linux-64, win-64, osx-arm64, ...), without probing: what a
    lockfile for another machine is compared with."""
    import sys

    family = {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux")
    return conda_platform(family, normalize_arch(_platform.machine() or "x86_64"))


# a Python version a plan may pin: X.Y (or X.Y.Z, planned as X.Y), never a path or a name
PYTHON_VERSION = r"3\.[0-9]{1,2}(?:\.[0-9]{1,3})?"
