"""gpuenv's lockfiles: conda-lock's v1 format, written here with PyYAML, read by gpuenv.lock.conda_lock.read.

conda-lock stays the authority on the format in the tests: every lockfile they make is read by
its parser and compared byte for byte with what its own writer makes of the same data.

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
) -> dict[str, Any]:
    """The lockfile as conda-lock's v1 document: plain data, in the key order conda-lock's own
    writer gives (`tests/lock/test_read_agrees.py` holds the two byte for byte).

    `not_portable`: project -> why, for wheels of a portable lock that no index publishes
    (gpuenv.lock.portability); they keep their own URL, and the metadata says why.
    """
    plan = inputs.plan
    platform = plan.platform
    packages: list[dict[str, Any]] = []
    conda_extra: dict[str, str] = {}
    for art in conda:
        r = art.record
        if r["name"].startswith("__"):  # a virtual package is the machine's, never locked
            continue
        packages.append(
            _entry(
                r["name"],
                r["version"],
                "conda",
                platform,
                r["url"],
                {"md5": r["md5"], "sha256": r["sha256"]},
                dependencies=_conda_dependencies(r["depends"]),
                build=r["build"],
            )
        )
        conda_extra[f"{_META}conda.{r['name']}"] = json.dumps(
            {k: r[k] for k in _CONDA_EXTRA_FIELDS}, sort_keys=True
        )
    for wheel in pip:
        local = inputs.portable and wheel.name in (not_portable or {})
        url = (
            portable_url(wheel)
            if inputs.portable and wheel.index is None and not local
            else wheel.url
        )
        packages.append(
            _entry(wheel.name, wheel.version, "pip", platform, url, {"sha256": wheel.sha256})
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
    # conda-lock sorts by its key (manager, name, platform); conda comes before pip
    packages.sort(key=lambda p: (p["manager"], p["name"], p["platform"]))
    metadata = {
        "content_hash": {platform: inputs.digest()},
        "channels": [{"url": c, "used_env_vars": []} for c in (inputs.channels if conda else ())],
        "platforms": [platform],
        "sources": ["gpuenv"],
        "custom_metadata": dict(sorted(custom.items())),
    }
    return {"version": 1, "metadata": metadata, "package": packages}


_CONDA_EXTRA_FIELDS = (
    "build_number",
    "subdir",
    "constrains",
    "size",
    "noarch",
    "file_name",
    "channel",
)


def _entry(
    name: str,
    version: str,
    manager: str,
    platform: str,
    url: str,
    hashes: dict[str, str],
    dependencies: Optional[dict[str, str]] = None,
    build: Optional[str] = None,
) -> dict[str, Any]:
    """One package in conda-lock v1's field order; gpuenv locks everything in category main."""
    entry: dict[str, Any] = {
        "name": name,
        "version": version,
        "manager": manager,
        "platform": platform,
        "dependencies": dict(sorted((dependencies or {}).items())),
        "url": url,
        "hash": hashes,
    }
    if build is not None:
        entry["build"] = build
    entry["category"] = "main"
    entry["optional"] = False
    return entry


def _conda_dependencies(depends: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for dep in depends:
        name, _, spec = dep.partition(" ")
        out[name] = spec.strip()
    return out


def render_lockfile(document: dict[str, Any], header: str = "") -> str:
    """The file's text: `header` (comment lines, gpuenv.lock.header), then the YAML as
    conda-lock's writer dumps it (PyYAML, keys in the document's order). The header replaces
    conda-lock's own help text, which tells users to regenerate the file with conda-lock, a
    command that cannot make it."""
    import yaml  # type: ignore[import-untyped]  # loaded only when a lockfile is written

    # libyaml's emitter where PyYAML has it: the same text (a test compares the two on every
    # kind of value a lockfile holds), 4-5x faster (a lab's lockfile: 40 ms -> 9 ms)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body: str = yaml.dump(document, Dumper=dumper, sort_keys=False)
    return header + body


def write_lockfile(document: dict[str, Any], path: Path, header: str = "") -> None:
    """Write atomically: a half-written lockfile never replaces a good one, and only a regular
    file or a new path is replaced (gpuenv.fs.atomic_write)."""
    from gpuenv.fs.atomic_write import atomic_write_text

    atomic_write_text(Path(path), render_lockfile(document, header))
