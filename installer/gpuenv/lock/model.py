"""What a lock is and what it yields, as values: the inputs a lockfile is a function of (their
digest decides staleness) and a lockfile as install and verify see it, whichever its format."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlsplit

from gpuenv.resolve.plan import Plan

LOCK_FORMAT = "1"
PORTABLE_PREFIX = "index:///"


@dataclass(frozen=True)
class LockInputs:
    """Everything a lock is a function of; its digest decides whether a lockfile is stale."""

    plan: Plan
    channels: tuple[str, ...]
    portable: bool
    exclude_newer: Optional[str]
    indexes: tuple[str, ...]  # the user's index URLs; part of the inputs only when not portable
    machine_class: Optional[str] = None

    def digest(self) -> str:
        plan = self.plan.to_json(with_rejected=False)
        for wording in ("reasons", "warnings", "fixes", "knowledge_base"):
            plan.pop(wording, None)  # explanations change without changing the stack
        for choice in plan.get("frameworks", {}).values():
            choice.pop("nvidia", None)  # what the knowledge base knows of the build's wheels
        data = {
            "lock_format": LOCK_FORMAT,
            "plan": plan,
            "channels": list(self.channels) if self.plan.conda else [],
            "portable": self.portable,
            "exclude_newer": self.exclude_newer,
            "indexes": [] if self.portable else list(self.indexes),
            "machine_class": self.machine_class,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class PipEntry:
    name: str
    version: str
    url: str  # a real URL, or index:///<project>/<file> when portable
    sha256: str

    @property
    def portable(self) -> bool:
        return self.url.startswith(PORTABLE_PREFIX)

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class LockedEnvironment:
    """A lockfile as install and verify see it."""

    path: Path
    platform: str
    plan: Plan
    inputs_hash: str
    intent_hash: str  # the inputs hash of the plan with every source reachable
    fallback: str  # what differs from that plan because a source was unreachable ("" if nothing)
    machine_class: Optional[str]
    conda: tuple[dict[str, Any], ...]  # rattler records
    pip: tuple[PipEntry, ...]
    content_sha256: str  # of the file itself: what an environment was installed from

    @property
    def python(self) -> str:
        return self.plan.python
