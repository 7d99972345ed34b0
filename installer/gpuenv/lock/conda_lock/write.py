"""gpuenv's lockfiles: conda-lock's v1 format, written through conda-lock, read by gpuenv.lock.conda_lock.read.

gpuenv keeps what install and verify need in conda-lock's `custom_metadata` (string values):
the Plan, the inputs hash, the machine class, and for conda packages the record fields that
conda-lock's own entries lack (build number, noarch kind, constraints, size).

Portable pip entries (`--portable`) carry no host: their url is `index:///<project>/<file>`;
install finds that file on the installing machine's configured index and checks its sha256.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from gpuenv.lock import conda_lock_api
from gpuenv.lock.conda import CondaArtifact
from gpuenv.lock.model import LOCK_FORMAT, PORTABLE_PREFIX, LockInputs
from gpuenv.lock.pypi import PipArtifact

_META = "gpuenv."


def portable_url(artifact: PipArtifact) -> str:
    return f"{PORTABLE_PREFIX}{artifact.name}/{quote(artifact.filename)}"


def build_lockfile(
    inputs: LockInputs,
    pip: list[PipArtifact],
    conda: list[CondaArtifact],
    intent_hash: Optional[str] = None,
    fallback: Optional[list[str]] = None,
    not_portable: Optional[dict[str, str]] = None,
) -> Any:
    """The conda-lock Lockfile object (conda-lock is imported here only: it is heavy).

    `not_portable`: project -> why, for wheels of a portable lock that no index publishes
    (gpuenv.lock.portability); they keep their own URL, and the metadata says why.
    """
    cl = conda_lock_api.load()
    HashModel, LockedDependency, Lockfile, LockMeta = (
        cl.HashModel,
        cl.LockedDependency,
        cl.Lockfile,
        cl.LockMeta,
    )

    plan = inputs.plan
    platform = plan.platform
    packages = []
    conda_extra: dict[str, str] = {}
    for art in conda:
        r = art.record
        packages.append(
            LockedDependency(
                name=r["name"],
                version=r["version"],
                manager="conda",
                platform=platform,
                dependencies=_conda_dependencies(r["depends"]),
                url=r["url"],
                hash=HashModel(md5=r["md5"], sha256=r["sha256"]),
                build=r["build"],
                categories={"main"},
            )
        )
        conda_extra[f"{_META}conda.{r['name']}"] = json.dumps(
            {
                k: r[k]
                for k in (
                    "build_number",
                    "subdir",
                    "constrains",
                    "size",
                    "noarch",
                    "file_name",
                    "channel",
                )
            },
            sort_keys=True,
        )
    for wheel in pip:
        local = inputs.portable and wheel.name in (not_portable or {})
        url = (
            portable_url(wheel)
            if inputs.portable and wheel.index is None and not local
            else wheel.url
        )
        packages.append(
            LockedDependency(
                name=wheel.name,
                version=wheel.version,
                manager="pip",
                platform=platform,
                dependencies={},
                url=url,
                hash=HashModel(sha256=wheel.sha256),
                categories={"main"},
            )
        )
    custom = {
        f"{_META}format": LOCK_FORMAT,
        f"{_META}inputs_hash": inputs.digest(),
        f"{_META}intent_hash": intent_hash or inputs.digest(),
        f"{_META}plan": json.dumps(plan.to_json(with_rejected=False), sort_keys=True),
        f"{_META}python": plan.python,
        f"{_META}accelerator": plan.accelerator,
        f"{_META}knowledge_base": plan.knowledge_base,
        f"{_META}portable": "true" if inputs.portable else "false",
        **conda_extra,
    }
    if fallback:
        custom[f"{_META}fallback"] = "; ".join(fallback)
    if inputs.portable and not_portable:
        custom[f"{_META}not_portable"] = "; ".join(
            f"{name}: {why}" for name, why in sorted(not_portable.items())
        )
    if inputs.machine_class:
        custom[f"{_META}machine_class"] = inputs.machine_class
    metadata = LockMeta(
        content_hash={platform: inputs.digest()},
        channels=[cl.Channel.from_string(c) for c in (inputs.channels if conda else ())],
        platforms=[platform],
        sources=["gpuenv"],
        custom_metadata=dict(sorted(custom.items())),
    )
    return Lockfile(package=packages, metadata=metadata)


def _conda_dependencies(depends: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for dep in depends:
        name, _, spec = dep.partition(" ")
        out[name] = spec.strip()
    return out


def write_lockfile(lockfile: Any, path: Path, header: str = "") -> None:
    """Write atomically: a half-written lockfile never replaces a good one, and only a regular
    file or a new path is replaced (gpuenv.fs.atomic_write).

    `header` (comment lines, gpuenv.lock.header) replaces conda-lock's own help text, which
    tells users to regenerate the file with conda-lock, a command that cannot make it.
    """
    from gpuenv.fs.atomic_write import atomic_write

    write_conda_lock_file = conda_lock_api.load().write_conda_lock_file

    def write(staged: Path) -> None:
        write_conda_lock_file(lockfile, staged, metadata_choices=None, include_help_text=False)
        body = staged.read_text(encoding="utf-8")
        staged.write_text(header + body, encoding="utf-8")

    atomic_write(Path(path), write)
