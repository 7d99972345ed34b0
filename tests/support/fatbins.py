"""Fatbin containers and CUDA-library-like files for the reader's tests, built here from the
layout nvcc writes (checked against nvcc 13.0's own output: `nvcc -fatbin`, `-shared`):
container header magic 0xBA55ED50, version 1, header size 16, payload size; entries with kind
(1 PTX, 2 ELF), header size, payload size, the architecture number at offset 28, flags at 40."""

from __future__ import annotations

import http.server
import os
import shutil
import struct
import subprocess
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from loopback import loopback

PTX, ELF = 1, 2


def entry(kind: int, arch: int, payload: bytes = b"", compressed: bool = False) -> bytes:
    header = 80 if kind == PTX else 64
    flags = 0x11 | (0x8000 if compressed else 0)
    head = struct.pack("<HHIQ", kind, 0x0101, header, len(payload))
    head += struct.pack(
        "<IIHHI", len(payload) if compressed else 0, 64 if kind == PTX else 0, 0, 8, arch
    )
    head += struct.pack("<IIQQQ", 0, 0, flags, 0, 0)
    return head.ljust(header, b"\0") + payload


def container(*entries: bytes, declared: Optional[int] = None) -> bytes:
    body = b"".join(entries)
    size = len(body) if declared is None else declared
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, size) + body


def library(*containers: bytes) -> bytes:
    """Bytes that look like a shared library: an ELF magic, host code, then the containers
    among other data (and a stray magic number that is no container)."""
    stray = struct.pack("<I", 0xBA55ED50) + b"\x07\x00\x99\x99" + os.urandom(64)
    return b"\x7fELF" + os.urandom(5000) + stray + b"".join(containers) + os.urandom(3000)


def nvcc_library(tmp: Path, gencodes: Sequence[str]) -> Optional[bytes]:
    """A real shared library compiled by nvcc, or None when nvcc is not installed."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    source = tmp / "k.cu"
    source.write_text("__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n")
    out = tmp / "libk.so"
    args = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", str(out), str(source)]
    for g in gencodes:
        args += ["-gencode", g]
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    return out.read_bytes()


def write_wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with single `bytes=a-b` / `bytes=-n` ranges, as indexes do, and counts
    the bytes it sends."""

    sent: list[int]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        spec = self.headers.get("Range")
        if not path.is_file() or not spec:
            return super().do_GET()
        data = path.read_bytes()
        first, _, last = spec.removeprefix("bytes=").partition("-")
        if not first:
            start, end = max(0, len(data) - int(last)), len(data) - 1
        else:
            start, end = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
        body = data[start : end + 1]
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.sent.append(len(body))


@contextmanager
def serve_ranges(root: Path, sent: list[int]) -> Iterator[str]:
    """Serve `root` on loopback with range support; `sent` collects the bytes of each range."""

    class Handler(_RangeHandler):
        pass

    Handler.sent = sent

    def make(*args: Any, **kwargs: Any) -> Handler:
        return Handler(*args, directory=str(root), **kwargs)

    with loopback(make) as url:
        yield url
