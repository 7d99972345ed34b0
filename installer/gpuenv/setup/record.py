"""What setup remembers of an environment (`<store>/.setup/<name>.json`): the SetupRecord.

A second run with the same inputs is a quick no-op, `gpuenv setup` with no arguments and
`gpuenv add` rebuild the same request, and `--json` answers from it. The file is on disk, so it
is read like untrusted input: through the bounded reader, and field by field, a damaged field
ignored rather than trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from gpuenv.envs.errors import InstallError
from gpuenv.envs.store import store_root
from gpuenv.lock.plan_fields import PYTHON_VERSION

if TYPE_CHECKING:
    from gpuenv.index.config import IndexConfig
    from gpuenv.machine import Machine
    from gpuenv.recipes import KnowledgeBase
    from gpuenv.setup.options import SetupOptions

MAX_RECORD_BYTES = 4 << 20  # a record is a few kB; a huge one is not setup's


class SetupRecordError(InstallError):
    """Setup could not write what it records (its state, the lockfile): exit 1."""


@dataclass(frozen=True)
class SetupRecord:
    """One environment as setup left it: what was asked (so a re-run asks the same), what was
    installed, and whether it verified."""

    inputs_hash: str = ""  # of the machine, the request and the knowledge base (inputs_hash)
    lockfile: str = ""
    lockfile_sha256: str = ""
    stack: str = ""
    python_version: str = ""  # the environment's Python
    verified: bool = False
    verified_at: str = ""
    activate: str = ""
    lab_class: Optional[str] = None
    # the request
    frameworks: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    jupyter: bool = False
    python: Optional[str] = None  # --python, as given
    no_gpu: bool = False
    require_gpu: bool = False
    allow_cpu_fallback: bool = False
    kernel: Optional[str] = None
    summary: dict[str, Any] = field(default_factory=dict)  # Plan.summary(), for --json

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["frameworks"] = list(self.frameworks)
        data["packages"] = list(self.packages)
        return data

    @classmethod
    def from_json(cls, data: object) -> Optional[SetupRecord]:
        """The record in `data`, or None when it is no JSON object. A field of the wrong type
        reads as unset; a request list with one entry that is no plain requirement is dropped
        whole (never half-used)."""
        if not isinstance(data, dict):
            return None
        python = data.get("python")
        return cls(
            inputs_hash=_text(data, "inputs_hash"),
            lockfile=_text(data, "lockfile"),
            lockfile_sha256=_text(data, "lockfile_sha256"),
            stack=_text(data, "stack"),
            python_version=_text(data, "python_version"),
            verified=data.get("verified") is True,
            verified_at=_text(data, "verified_at"),
            activate=_text(data, "activate"),
            lab_class=_text(data, "lab_class") or None,
            frameworks=_requirements(data.get("frameworks")),
            packages=_requirements(data.get("packages")),
            jupyter=data.get("jupyter") is True,
            python=python if isinstance(python, str) and PYTHON_VERSION.fullmatch(python) else None,
            no_gpu=data.get("no_gpu") is True,
            require_gpu=data.get("require_gpu") is True,
            allow_cpu_fallback=data.get("allow_cpu_fallback") is True,
            kernel=_text(data, "kernel") or None,
            summary=summary if isinstance(summary := data.get("summary"), dict) else {},
        )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _requirements(value: object) -> tuple[str, ...]:
    from gpuenv.resolve.packages import check_package
    from gpuenv.resolve.requirements import RequirementError

    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ()
    try:
        return tuple(check_package(v) for v in value)
    except RequirementError:
        return ()


def record_path(name: str) -> Path:
    """Where setup records environment `name`; the name is checked first (a plain store name),
    so `add -n ../../x` never becomes a path outside the store."""
    from gpuenv.envs.store import check_name

    return store_root() / ".setup" / f"{check_name(name)}.json"


def read_record(name: str) -> Optional[SetupRecord]:
    """What setup recorded for `name`; None when there is nothing usable. Read through the
    bounded, non-blocking reader (a FIFO, /dev/zero, a link or a 3 GB file there is no record,
    not a hang)."""
    from gpuenv.fs import strict_json
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    path = record_path(name)
    if not os.path.lexists(path):
        return None
    try:
        raw = read_bounded(path, MAX_RECORD_BYTES, "setup record", follow_links=False)
        data = strict_json.loads(raw.decode("utf-8"))
    except (UnsafePathError, ValueError):
        return None
    return SetupRecord.from_json(data)


def write_record(name: str, record: SetupRecord) -> None:
    """The record, through the one atomic writer: a link planted at `.setup` or at the record
    is refused, not written through."""
    from gpuenv.fs.atomic_write import OutputPathError, OutputWriteError, atomic_write_text
    from gpuenv.fs.disk_errors import disk_advice

    path = record_path(name)
    try:
        text = json.dumps(record.to_json(), indent=2, sort_keys=True) + "\n"
        atomic_write_text(path, text, root=store_root())
    except (OutputPathError, OutputWriteError) as exc:
        cause = exc.cause if isinstance(exc, OutputWriteError) else None
        installed = "The environment itself is installed."
        raise SetupRecordError(
            disk_advice(path, cause, elsewhere="set GPUENV_HOME", outcome=installed)
            if cause is not None
            else f"could not record setup's state in {path}: {exc}. {installed}"
        ) from None


def inputs_hash(
    machine: Machine, opts: SetupOptions, kb: KnowledgeBase, indexes: IndexConfig
) -> str:
    """What decides the stack, hashed: the same value on the next run means nothing changed."""
    described = machine.to_json()
    described.pop("pythons", None)  # interpreters come and go without changing the plan
    described.pop("notes", None)
    data = {
        "machine": described,
        "requirements": list(opts.requirements),
        "lab": hashlib.sha256(opts.lab.path.read_bytes()).hexdigest() if opts.lab else None,
        "python": opts.python,
        "no_gpu": opts.no_gpu,
        "require_gpu": opts.require_gpu,
        "packages": list(opts.packages),
        "jupyter": opts.jupyter,
        # only when given, so that setups recorded before the option stay unchanged
        **({"allow_cpu_fallback": True} if opts.allow_cpu_fallback else {}),
        "knowledge_base": kb.digest,
        "indexes": [*indexes.all_indexes(), *indexes.find_links],
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
