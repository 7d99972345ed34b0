"""The conda part of a lock: CUDA/cuDNN from conda-forge (and Python with them) via py-rattler."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from gpuenv.cache import kind_dir
from gpuenv.conda.client import CondaError, run_rattler
from gpuenv.lock.errors import SourceUnreachableError, UnsatisfiableError
from gpuenv.lock.targets import virtual_packages
from gpuenv.resolve.plan import Plan
from gpuenv.versions import version_key

DEFAULT_CHANNELS = ("conda-forge",)
# where a channel given by name lives: rattler's (and conda's) default channel alias
CHANNEL_ALIAS = "https://conda.anaconda.org/"
_UNREACHABLE = re.compile(
    r"dns|error sending request|connection|timed out|failed to fetch|unreachable|no such file", re.I
)


@dataclass(frozen=True)
class CondaArtifact:
    record: dict[str, Any]  # the rattler record, as rattler_child reports it

    @property
    def name(self) -> str:
        return str(self.record["name"])


def channel_url(channel: str) -> str:
    """A channel as rattler reads it: a URL as it is, an absolute path as a file:// URL, a name
    under the default channel alias (conda-forge -> https://conda.anaconda.org/conda-forge)."""
    import os
    from pathlib import Path

    text = channel.strip().rstrip("/")
    if not text:
        raise ValueError("a channel has a name")
    if "://" in text:
        return text
    if os.path.isabs(text):
        return Path(text).as_uri()
    return CHANNEL_ALIAS + text


def conda_specs(plan: Plan) -> list[str]:
    """What the conda part installs: the plan's conda libraries, with Python and pip beside them."""
    if not plan.conda:
        return []
    return [f"python {plan.python}.*", "pip", *(_match_spec(s) for s in plan.conda)]


def _match_spec(spec: str) -> str:
    """ "cudatoolkit=11.2" (conda's = prefix match) as a MatchSpec."""
    name, sep, version = spec.partition("=")
    if not sep or version.startswith("="):
        return spec.replace("==", " ==", 1) if "==" in spec else spec
    return f"{name} {version}.*"


def solve_conda(
    plan: Plan, *, channels: tuple[str, ...] = DEFAULT_CHANNELS, cuda: Optional[str] = None
) -> list[CondaArtifact]:
    specs = conda_specs(plan)
    if not specs:
        return []
    cuda_version = cuda or _plan_cuda(plan)
    request = {
        "op": "solve",
        "channels": list(channels),
        "specs": specs,
        "platform": plan.platform,
        "virtual_packages": virtual_packages(plan.platform, plan.glibc, cuda_version),
        "cache_dir": str(kind_dir("rattler")),  # refused if a planted link
    }
    try:
        result = run_rattler(request)
    except CondaError as exc:
        message = str(exc)
        if _UNREACHABLE.search(message) and "SolverError" not in message:
            first = message.strip().splitlines()[0] if message.strip() else message
            raise SourceUnreachableError(
                f"could not read conda channel(s) {', '.join(channels)} ({first}); the plan"
                f" needs {', '.join(plan.conda)} from there: lock where it is reachable, or pass"
                " --channel with a mirror"
            ) from exc
        raise UnsatisfiableError(
            f"the conda requirements ({', '.join(specs)}) cannot be solved on"
            f" {', '.join(channels)} for {plan.platform}: {message}"
        ) from exc
    return [CondaArtifact(r) for r in result["records"]]


def _plan_cuda(plan: Plan) -> Optional[str]:
    versions = [fw.cuda for fw in plan.frameworks.values() if fw.cuda]
    return max(versions, key=version_key) if versions else None
