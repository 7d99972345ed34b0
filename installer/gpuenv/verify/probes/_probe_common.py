# ruff: noqa: UP006, UP035, SIM105 - runs under Python 3.8: typing.List/Dict, no newer idioms
"""Helpers shared by the probe scripts. Runs inside the environment: stdlib only, Python 3.8+.

A probe keeps the real stdout for its one result line and points both sys.stdout and file
descriptor 1 at stderr, so whatever a framework prints (Python or C++) cannot corrupt it.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import traceback
import warnings
from typing import Any, Callable, Dict, List

RESULT_MARKER = "GPUENV-PROBE-RESULT "
STAGE_MARKER = "gpuenv-probe: stage "
PROBE_SCHEMA = 1
_MAX_TEXT = 2000

Result = Dict[str, Any]


def error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "..."


def stage(name: str) -> None:
    """Say on stderr what the probe is about to do, so a hang can be located."""
    sys.stderr.write(STAGE_MARKER + name + "\n")
    sys.stderr.flush()


class _Collector(logging.Handler):
    def __init__(self, sink: List[str]) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.append(f"{record.name}: {record.getMessage()}"[:_MAX_TEXT])
        except Exception:  # a log line we cannot format is not worth a failure
            pass


def collect_messages(result: Result, loggers: List[str]) -> None:
    """Record Python warnings and WARNING+ log records of `loggers` into result["messages"]."""
    sink: List[str] = result.setdefault("messages", [])
    original = warnings.showwarning

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        sink.append(f"{getattr(category, '__name__', 'Warning')}: {message}"[:_MAX_TEXT])
        original(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.simplefilter("always")
    for name in loggers:
        logging.getLogger(name).addHandler(_Collector(sink))


def distributions(words: List[str]) -> Dict[str, str]:
    """Installed distributions whose name contains one of `words`: name -> version."""
    found: Dict[str, str] = {}
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return found
    try:
        for dist in metadata.distributions():
            name = str(dist.metadata["Name"] or "").lower()
            if any(w in name for w in words):
                found[name] = str(dist.version)
    except Exception:  # a broken .dist-info must not stop the probe
        pass
    return found


def base_facts(probe: str) -> Result:
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    return {
        "probe": probe,
        "schema": PROBE_SCHEMA,
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": sys.platform,
        "machine": platform.machine(),
        "cuda_visible_devices": cvd,
        "import_ok": False,
        "import_error": None,
        "ops": [],
        "messages": [],
    }


def op_record(name: str, device: str) -> Result:
    return {
        "name": name,
        "device": device,
        "ran": False,
        "ok": False,
        "max_abs_err": None,
        "error": None,
    }


def matmul_inputs(n: int = 32) -> Any:
    """Two deterministic n x n matrices as nested lists (no numpy, no random)."""
    a = [[((i * n + j) % 7) / 7.0 for j in range(n)] for i in range(n)]
    b = [[((i * n + j) % 5) / 5.0 for j in range(n)] for i in range(n)]
    return a, b


def matmul_reference(a: List[List[float]], b: List[List[float]]) -> List[List[float]]:
    columns = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a]


def conv_inputs() -> Any:
    """x: 1x3x8x8 (NCHW), w: 4x3x3x3 (OIHW), nested lists."""
    x = [
        [
            [[((c * 64 + i * 8 + j) % 11) / 11.0 for j in range(8)] for i in range(8)]
            for c in range(3)
        ]
    ]
    w = [
        [
            [[((o * 27 + c * 9 + i * 3 + j) % 3) / 3.0 for j in range(3)] for i in range(3)]
            for c in range(3)
        ]
        for o in range(4)
    ]
    return x, w


def conv2d_reference(x: Any, w: Any) -> Any:
    """Cross-correlation, stride 1, no padding, as torch.nn.functional.conv2d computes it."""
    size = len(x[0][0]) - len(w[0][0]) + 1
    k = len(w[0][0])
    return [
        [
            [
                [
                    sum(
                        x[n][c][i + di][j + dj] * w[o][c][di][dj]
                        for c in range(len(w[o]))
                        for di in range(k)
                        for dj in range(k)
                    )
                    for j in range(size)
                ]
                for i in range(size)
            ]
            for o in range(len(w))
        ]
        for n in range(len(x))
    ]


def max_abs_error(got: Any, want: Any) -> float:
    """Largest |got - want| over two nested lists of the same shape (inf if shapes differ)."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return float("inf")
        return max([max_abs_error(g, w) for g, w in zip(got, want)] or [0.0])
    diff = abs(float(got) - float(want))
    return diff if diff == diff else float("inf")  # NaN counts as wrong


def check_op(rec: Result, got: Any, want: Any) -> None:
    """Fill an op record: the error against the reference, and whether it is within 1%
    of the largest value (loose enough for TF32 and reduced-precision GPU defaults)."""
    rec["ran"] = True
    err = max_abs_error(got, want)
    rec["max_abs_err"] = err if err != float("inf") else None
    rec["ok"] = err <= 1e-2 * max(1.0, max_abs_error(want, _zeros_like(want)))


def _zeros_like(value: Any) -> Any:
    return [_zeros_like(v) for v in value] if isinstance(value, list) else 0.0


# A coarse filter of CUDA's library names; the judge applies gpuenv's exact soname rule.
_CUDA_PREFIXES = ("libcu", "libnccl", "libnvrtc", "libnvJitLink")


def loaded_libraries() -> List[str]:
    """The CUDA libraries this process has mapped, as the kernel names them (links resolved):
    what the loader really took, after the framework touched the GPU. Linux only."""
    found = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    name = os.path.basename(path)
                    if name.startswith(_CUDA_PREFIXES) and ".so" in name:
                        found.add(path)
    except OSError:  # not Linux, or no /proc: nothing to say
        pass
    return sorted(found)


def library_owners(paths: List[str]) -> Dict[str, str]:
    """loaded path -> "<distribution> <version>" of the NVIDIA wheel that installed it, read from
    the installed distributions' file lists: the cu11/cu12/cu13 wheels of one library share a
    folder, so only the owner tells which CUDA a library file was built for."""
    wanted = {os.path.realpath(p) for p in paths}
    owners: Dict[str, str] = {}
    if not wanted:
        return owners
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python 3.8 has it
        return owners
    for dist in metadata.distributions():
        name = str(dist.metadata["Name"] or "")
        if not name.lower().startswith("nvidia"):
            continue
        for file in dist.files or ():
            try:
                where = os.path.realpath(str(dist.locate_file(file)))
            except (OSError, ValueError):
                continue
            if where in wanted:
                owners[where] = f"{name} {dist.version}"
    return owners


def run(probe: str, body: Callable[[Result], None]) -> None:
    """Run `body` with fd 1 sent to stderr; print the facts on the real stdout, always."""
    sys.stdout.flush()
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    result = base_facts(probe)
    try:
        body(result)
    except BaseException as exc:  # report everything, even SystemExit from a framework
        result["probe_error"] = error_text(exc)
        result["probe_traceback"] = traceback.format_exc()[-_MAX_TEXT:]
    result["prefix"] = os.path.realpath(sys.prefix)
    result["loaded_libraries"] = loaded_libraries()
    try:
        result["library_owners"] = library_owners(result["loaded_libraries"])
    except Exception as exc:  # a broken distribution's metadata: say it, judge the rest
        result["library_owners_error"] = error_text(exc)
    stage("done")
    line = RESULT_MARKER + json.dumps(result, default=str, sort_keys=True) + "\n"
    os.write(real_stdout, line.encode("utf-8"))
    os.close(real_stdout)
