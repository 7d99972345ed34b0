"""Turn a check's recording into committed fixtures: tests/fixtures/detect/NAME/, with SOURCE.

The recording is untrusted input like any file that arrives from elsewhere: only the known file
names, only regular files (no links), and NAME is a plain folder name.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from pathlib import Path
from typing import Optional

from gpuenv.fs.safe_paths import is_regular_file
from gpuenv.gpucheck import compare, record
from gpuenv.gpucheck.run import FIXTURE, MACHINE_JSON, MACHINE_SMI_JSON

KNOWN = frozenset(
    {
        record.NVML_JSON,
        record.NVML_EXTRA_JSON,
        record.SMI_QUERY,
        record.SMI_Q,
        record.SMI_XML,
        record.PROC_VERSION,
        record.LINUX_JSON,
        record.RECORDING_JSON,
        "nvidia-smi.query-rejected.txt",
        MACHINE_JSON,
        MACHINE_SMI_JSON,
        "SOURCE",
    }
)
MAX_BYTES = 2 * 1024 * 1024  # per file; nvidia-smi -q -x of 8 GPUs is well under this
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class PromoteError(Exception):
    """The recording or the name cannot be used; the message says why."""


def read_recording(source: Path) -> dict[str, bytes]:
    """The recorded files from an output folder, its fixture/ folder, or gpu-check.tar.gz."""
    if source.is_file() and source.name.endswith(".tar.gz"):
        return _from_tar(source)
    if (source / "gpu-check.tar.gz").is_file() and not (source / FIXTURE).is_dir():
        return _from_tar(source / "gpu-check.tar.gz")
    folder = source / FIXTURE if (source / FIXTURE).is_dir() else source
    if folder.is_symlink() or not folder.is_dir():
        raise PromoteError(f"{source}: no recording there (run scripts/gpu-check.sh first)")
    files: dict[str, bytes] = {}
    for path in sorted(folder.iterdir()):
        if path.name not in KNOWN:
            continue
        if not is_regular_file(path):
            raise PromoteError(f"{path}: not a regular file")
        if path.stat().st_size > MAX_BYTES:
            raise PromoteError(f"{path}: larger than {MAX_BYTES} bytes")
        files[path.name] = path.read_bytes()
    return _checked(files, source)


def _from_tar(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if len(parts) != 2 or parts[0] != FIXTURE or parts[1] not in KNOWN:
                    continue
                if not member.isfile() or member.size > MAX_BYTES:
                    raise PromoteError(f"{path}: {member.name} is not a small regular file")
                data = tar.extractfile(member)
                files[parts[1]] = data.read() if data is not None else b""
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise PromoteError(f"{path}: not a readable gpu-check archive ({exc})") from exc
    return _checked(files, path)


def _checked(files: dict[str, bytes], source: Path) -> dict[str, bytes]:
    if record.RECORDING_JSON not in files:
        raise PromoteError(f"{source}: no {record.RECORDING_JSON}: not a GPU recording")
    for name, data in files.items():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PromoteError(f"{name}: not UTF-8 text") from exc
    return files


def promote(source: Path, name: str, fixtures: Path, note: str = "", force: bool = False) -> Path:
    """Copy the recording to fixtures/NAME (a new folder), adding `note` to its SOURCE."""
    if not _NAME.match(name) or ".." in name:
        raise PromoteError(
            f"{name!r}: use a plain folder name (lower-case letters, digits, '.', '_', '-'),"
            " e.g. h200-580.159.03"
        )
    files = read_recording(source)
    if fixtures.is_symlink() or not fixtures.is_dir():
        raise PromoteError(f"{fixtures}: not a fixtures folder")
    target = fixtures / name
    if target.is_symlink():
        raise PromoteError(f"{target} is a link; refusing to write through it")
    if target.exists():
        if not force:
            raise PromoteError(f"{target} exists; pass --force to replace it")
        shutil.rmtree(target)
    staging = fixtures / f".{name}.tmp"
    if staging.is_symlink() or staging.is_file():
        staging.unlink()
    elif staging.exists():
        shutil.rmtree(staging)  # left by an interrupted promote
    staging.mkdir()
    source_text = files.get("SOURCE", b"").decode("utf-8")
    if note:
        source_text += f"\nnote: {note.strip()}\n"
    files["SOURCE"] = source_text.encode("utf-8")
    for fname, data in files.items():
        (staging / fname).write_bytes(data)
    staging.rename(target)
    return target


def replay(folder: Path) -> list[str]:
    """What today's parsers make of the recorded raw files, against what detect said then.

    Empty when they agree: the recorded driver, CUDA version and each GPU's name, PCI id,
    memory and compute capability (where the source gives it) come out the same.
    """
    files = {
        p.name: p.read_text(encoding="utf-8")
        for p in folder.iterdir()
        if p.name in KNOWN and is_regular_file(p)
    }
    meta = json.loads(files.get(record.RECORDING_JSON) or "{}")
    fields = tuple(meta.get("query_fields") or ())
    pairs = [
        (compare.nvml_view(files), files.get(MACHINE_JSON)),
        (compare.smi_view(files, fields), files.get(MACHINE_SMI_JSON)),
    ]
    out: list[str] = []
    for view, machine_text in pairs:
        if view.error is not None or machine_text is None:
            continue
        said = compare.machine_view("detect", machine_text)
        out += _differences(view, said)
    return out


def _differences(view: compare.View, said: compare.View) -> list[str]:
    out = []
    if view.driver != said.driver:
        out.append(f"{view.source}: driver {view.driver} parsed, detect said {said.driver}")
    if view.cuda != said.cuda:
        out.append(f"{view.source}: CUDA {view.cuda} parsed, detect said {said.cuda}")
    if len(view.gpus) != len(said.gpus):
        out.append(f"{view.source}: {len(view.gpus)} GPUs parsed, detect said {len(said.gpus)}")
    for a, b in zip(view.gpus, said.gpus):
        for attr in ("name", "pci_id", "memory_mib", "compute_capability"):
            got: Optional[object] = getattr(a, attr)
            if got is not None and got != getattr(b, attr):
                out.append(
                    f"{view.source}: GPU {a.index} {attr} {got!r}, detect said {getattr(b, attr)!r}"
                )
    return out
