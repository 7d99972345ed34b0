"""A lab for the fleet test: three classes (two GPU classes, one CPU), their lockfiles made from
stand-in wheels on a local HTTP index that counts what it serves.

The stand-in JAX is pure Python. With a CUDA plugin installed beside it, it uses the GPU when
`nvidia-smi` answers on PATH (the host's own stand-in) and falls back to the CPU otherwise, as
the real one does; `gpuenv verify` then judges it with its real probe.
"""

from __future__ import annotations

import http.server
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuenv.index.config import IndexConfig
from gpuenv.lock import LockOptions, lock_plan
from gpuenv.lock.load import load_locked
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan
from localrepos import build_simple_index, build_wheel

PY = f"{sys.version_info.major}.{sys.version_info.minor}"

JAX = '''"""A stand-in for JAX (gpuenv's fleet test)."""
import importlib

__version__ = "{version}"


class Device:
    def __init__(self, id, platform, kind):
        self.id, self.platform, self.device_kind = id, platform, kind
        self.compute_capability = None

    def __str__(self):
        return f"{{self.platform}}:{{self.id}}"

    def __lt__(self, other):
        return str(self) < str(other)


def _gpus():
    for name in ("jax_cuda12_plugin", "jax_cuda11_plugin"):
        try:
            plugin = importlib.import_module(name)
        except ImportError:
            continue
        return [Device(i, "gpu", kind) for i, kind in enumerate(plugin.gpus())]
    return []


def devices(backend=None):
    gpus = _gpus()
    if backend == "gpu" and not gpus:
        raise RuntimeError("Unknown backend: 'gpu' requested, but no GPU platform is present")
    return gpus or [Device(0, "cpu", "cpu")]


def default_backend():
    return devices()[0].platform
'''

JAX_NUMPY = '''"""jax.numpy's few functions the probe calls, on nested lists."""
import jax

float32 = "float32"


class Array:
    def __init__(self, rows):
        self.rows, self.device = rows, jax.devices()[0]

    def block_until_ready(self):
        return self

    def devices(self):
        return {self.device}

    def tolist(self):
        return self.rows


def asarray(rows, dtype=None):
    return Array([[float(x) for x in row] for row in rows])


def dot(a, b):
    columns = list(zip(*b.rows))
    return Array([[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a.rows])
'''

PLUGIN = '''"""A stand-in CUDA plugin: the GPUs nvidia-smi lists, none when it does not answer."""
import subprocess


def gpus():
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["stand-in CUDA device"] if done.returncode == 0 else []
'''


@dataclass(frozen=True)
class LabClass:
    name: str
    row: str  # the class's keys in the lab file
    jax: str
    plugin: str | None  # a stand-in CUDA plugin's project name, for a GPU class
    cuda: str | None


CLASSES = (
    LabClass(
        "ada",
        'compute_capability = "8.9"\ndriver = "550.54.14"',
        "0.4.31",
        "jax-cuda12-plugin",
        "12.4",
    ),
    LabClass(
        "kepler",
        'compute_capability = "3.5"\ndriver = "450.66"',
        "0.4.30",
        "jax-cuda11-plugin",
        "11.0",
    ),
    LabClass("cpu", 'gpu = "none"', "0.4.30", None, None),
)


def build_wheels(out: Path) -> list[Path]:
    wheels = [
        build_wheel(
            out,
            "jax",
            version,
            requires=["numpy"],
            files={"jax/__init__.py": JAX.format(version=version), "jax/numpy.py": JAX_NUMPY},
        )
        for version in ("0.4.30", "0.4.31")
    ]
    wheels.append(
        build_wheel(out, "numpy", "1.26.4", files={"numpy/__init__.py": "__version__ = '1.26.4'\n"})
    )
    for cls in CLASSES:
        if cls.plugin:
            module = cls.plugin.replace("-", "_")
            wheels.append(build_wheel(out, cls.plugin, cls.jax, files={f"{module}.py": PLUGIN}))
    return wheels


def plan_for(cls: LabClass) -> Plan:
    gpu = cls.plugin is not None
    variant = f"cuda{cls.cuda.split('.')[0]}" if cls.cuda else "cpu"
    pip = [PipRequirement(f"jax=={cls.jax}")]
    if cls.plugin:
        pip.append(PipRequirement(f"{cls.plugin}=={cls.jax}"))
    return Plan(
        python=PY,
        platform="linux-64",
        accelerator="cuda" if gpu else "cpu",
        glibc=None,
        gpu=None,
        driver=None,
        frameworks={
            "jax": FrameworkChoice("jax", cls.jax, variant, cls.cuda, None, "jax", None, gpu)
        },
        pip=tuple(pip),
        conda=(),
        companions=(),
        constraints=(),
        exclude_newer=None,
        warnings=(),
        reasons=(),
        fixes=(),
        rejected=(),
        knowledge_base="fleet test",
    )


def write_lab(folder: Path, index_url: str) -> Path:
    """lab.toml and lockfiles/<class>.conda-lock.yml, locked against `index_url`."""
    rows = "\n".join(f'[[class]]\nname = "{c.name}"\nos = "linux"\n{c.row}\n' for c in CLASSES)
    lab = folder / "lab.toml"
    lab.write_text(
        f'[lab]\nname = "fleet test lab"\nlockfiles = "lockfiles"\n\n[stack]\nrequirements = ["jax"]\n\n{rows}'
    )
    (folder / "lockfiles").mkdir()
    for cls in CLASSES:
        options = LockOptions(
            output=folder / "lockfiles" / f"{cls.name}.conda-lock.yml",
            channels=(),
            portable=True,
            exclude_newer="none",
            machine_class=cls.name,
            indexes=IndexConfig(index_url=index_url, origin="test"),
            local_paths=False,
        )
        lock_plan(plan_for(cls), options)
    return lab


def lockfile_files(lockfile: Path) -> set[str]:
    """The file names of a lockfile's wheels."""
    return {w.filename for w in load_locked(lockfile).pip}


# ---- the upstream: an index that counts what it serves -------------------------------------------


@dataclass
class Upstream:
    url: str  # the PEP 503 index, .../simple/
    requests: Counter[str] = field(default_factory=Counter)  # path -> GETs
    bytes_sent: Counter[str] = field(default_factory=Counter)  # path -> body bytes
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.bytes_sent.clear()

    def files(self) -> dict[str, int]:
        """name -> GETs of each wheel served since the last reset."""
        with self.lock:
            return {p.rsplit("/", 1)[-1]: n for p, n in self.requests.items() if "/files/" in p}

    def file_bytes(self) -> int:
        """The bytes of the wheels served (the index pages aside)."""
        with self.lock:
            return sum(n for p, n in self.bytes_sent.items() if "/files/" in p)

    def total_bytes(self) -> int:
        """Everything served: wheels and index pages."""
        with self.lock:
            return sum(self.bytes_sent.values())

    def total_requests(self) -> int:
        with self.lock:
            return sum(self.requests.values())

    def counts(self) -> tuple[int, int, int]:
        """(wheel bytes, all bytes, requests) since the last reset."""
        return self.file_bytes(), self.total_bytes(), self.total_requests()


@contextmanager
def serve_upstream(root: Path, wheels: list[Path]) -> Iterator[Upstream]:
    """A PEP 503 index of `wheels` on 127.0.0.1 (the root namespace's loopback, which the test's
    hosts cannot reach), counting each request and the bytes of each body."""
    build_simple_index(root, wheels)
    upstream = Upstream(url="")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def copyfile(self, source: Any, outputfile: Any) -> None:
            data = source.read()
            with upstream.lock:
                upstream.requests[self.path] += 1
                upstream.bytes_sent[self.path] += len(data)
            outputfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    upstream.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    try:
        yield upstream
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
