"""Reading a gpuenv lockfile: untrusted input, checked field by field before anything acts on it.

gpuenv writes the file (gpuenv.lock.conda_lock.write) in conda-lock's v1 format, and conda-lock
stays the authority on that format in the tests; this reader loads the YAML with libyaml (10-20x faster than conda-lock's pydantic models, which install paid on every
run) straight into gpuenv's types. tests/lock/test_read_agrees.py holds the two readers to the
same answers on every lockfile the tests build and every file in lockfiles/.

What is refused, each with the field named (LockfileError, exit 2): a file that is not a small
regular file, a shape conda-lock's v1 format does not have, wrong types, a Python that is not
X.Y, a platform or framework gpuenv does not know, the same package twice, a hash that is not
hex of the right length, a file name that is not a plain name, a pip URL that is not a wheel or a
conda URL that is not a package (no package code ever runs at install), and conda metadata that
tries to override what `package[].hash`, the one authority on bytes, says.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Optional

from packaging.utils import canonicalize_name

from gpuenv.fs import strict_json
from gpuenv.fs.safe_paths import UnsafePathError, is_md5
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.model import LOCK_FORMAT, LockedEnvironment, PipEntry
from gpuenv.lock.plan_fields import PYTHON_VERSION, check_plan
from gpuenv.lock.validate import PROJECT_NAME, check_sha256, url_file_name, wheel_file_name
from gpuenv.recipes import PLATFORMS
from gpuenv.resolve.plan import Plan

_META = "gpuenv."
_TOP_KEYS = {"version", "metadata", "package"}
_METADATA_KEYS = {
    "content_hash",
    "channels",
    "platforms",
    "sources",
    "time_metadata",
    "git_metadata",
    "inputs_metadata",
    "custom_metadata",
}
_PACKAGE_KEYS = {
    "name",
    "version",
    "manager",
    "platform",
    "dependencies",
    "url",
    "hash",
    "source",
    "build",
    "category",
    "optional",
}
# What gpuenv.conda.<name> may add to a conda record: never its name, version, url or hashes.
_CONDA_EXTRA: dict[str, Any] = {
    "build_number": int,
    "subdir": str,
    "constrains": list,
    "size": (int, type(None)),
    "noarch": (str, type(None)),
    "file_name": str,
    "channel": str,
}
_CONDA_SUFFIXES = (".conda", ".tar.bz2")
_CONDA_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def parse_lockfile(raw: bytes, path: Path) -> LockedEnvironment:
    try:
        return _Reader(path).read(raw)
    except UnsafePathError as exc:
        raise LockfileError(f"{path}: {exc}") from None


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, message: str) -> LockfileError:
        return LockfileError(f"{self.path}: {message}")

    def read(self, raw: bytes) -> LockedEnvironment:
        doc = self.mapping(_load_yaml(raw, self.path), "the file (a conda-lock v1 file)")
        self.known_keys(doc, _TOP_KEYS, "the top level")
        if doc.get("version") != 1 or isinstance(doc.get("version"), bool):
            version = "missing" if doc.get("version") is None else f"{doc['version']!r:.40}"
            raise self.fail(f"version is {version}; gpuenv reads conda-lock version 1")
        meta = self.mapping(doc.get("metadata"), "metadata")
        self.known_keys(meta, _METADATA_KEYS, "metadata")
        custom = self.strings(meta.get("custom_metadata"), "metadata.custom_metadata")
        if custom.get(f"{_META}format") != LOCK_FORMAT:
            raise self.fail(
                "not written by gpuenv (or by an incompatible version): no gpuenv plan in it"
            )
        platform = self.platform(meta.get("platforms"))
        plan = self.plan(custom, platform)
        conda: list[dict[str, Any]] = []
        pip: list[PipEntry] = []
        seen: set[tuple[str, str]] = set()
        packages = doc.get("package")
        if not isinstance(packages, list):
            raise self.fail(f"package is {_type(packages)}, expected a list")
        for i, entry in enumerate(packages):
            manager, name, item = self.package(entry, i, platform, custom)
            key = (manager, canonicalize_name(name) if manager == "pip" else name)
            if key in seen:
                raise self.fail(f"package[{i}]: {manager} package {name} is listed twice")
            seen.add(key)
            if isinstance(item, PipEntry):
                pip.append(item)
            else:
                conda.append(item)
        return LockedEnvironment(
            path=self.path,
            platform=platform,
            plan=plan,
            inputs_hash=custom.get(f"{_META}inputs_hash", ""),
            intent_hash=custom.get(f"{_META}intent_hash", ""),
            fallback=custom.get(f"{_META}fallback", ""),
            machine_class=custom.get(f"{_META}machine_class"),
            conda=tuple(sorted(conda, key=lambda r: str(r["name"]))),
            pip=tuple(sorted(pip, key=lambda p: p.name)),
            content_sha256=hashlib.sha256(raw).hexdigest(),
        )

    # -- shapes ---------------------------------------------------------------------------------

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{where} is {_type(value)}, expected a mapping")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(f"{where} has a key {key!r} that is not a string")
        return value

    def strings(self, value: Any, where: str) -> dict[str, str]:
        if value is None:
            return {}
        for key, item in self.mapping(value, where).items():
            if not isinstance(item, str):
                raise self.fail(f"{where}.{key} is {_type(item)}, expected a string")
        return value  # type: ignore[no-any-return]

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(f"{where} is {_type(value)}, expected a non-empty string")
        return value

    def known_keys(self, value: dict[str, Any], allowed: set[str], where: str) -> None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(f"{where} has unknown key(s) {', '.join(map(repr, unknown))}")

    # -- metadata -------------------------------------------------------------------------------

    def platform(self, value: Any) -> str:
        if not isinstance(value, list) or len(value) != 1:
            raise self.fail(
                f"metadata.platforms is {value!r:.80}; a gpuenv lockfile holds exactly one platform"
            )
        platform = self.text(value[0], "metadata.platforms[0]")
        if platform not in PLATFORMS:
            raise self.fail(
                f"metadata.platforms: {platform!r:.40} is not a platform gpuenv knows"
                f" ({', '.join(PLATFORMS)})"
            )
        return platform

    def plan(self, custom: dict[str, str], platform: str) -> Plan:
        where = f"metadata.custom_metadata.{_META}plan"
        data = self.custom_json(custom, f"{_META}plan")
        problem = check_plan(data)
        if problem:
            raise self.fail(f"{where}: {problem}")
        plan = Plan.from_json(data)
        python = custom.get(f"{_META}python", plan.python)
        if not PYTHON_VERSION.fullmatch(python) or python != plan.python:
            raise self.fail(
                f"metadata.custom_metadata.{_META}python is {python!r:.40}; expected the plan's"
                f" Python ({plan.python}) as X.Y"
            )
        if plan.platform != platform:
            raise self.fail(f"{where}: platform {plan.platform} but the file is for {platform}")
        return plan

    # -- packages -------------------------------------------------------------------------------

    def package(
        self, entry: Any, i: int, platform: str, custom: dict[str, str]
    ) -> tuple[str, str, Any]:
        dep = self.mapping(entry, f"package[{i}]")
        name = self.text(dep.get("name"), f"package[{i}].name")
        where = f"package[{i}] ({name!r:.60})"
        self.known_keys(dep, _PACKAGE_KEYS, where)
        if not (PROJECT_NAME if dep.get("manager") == "pip" else _CONDA_NAME).fullmatch(name):
            raise self.fail(f"{where}.name is not a package name")
        version = self.text(dep.get("version"), f"{where}.version")
        manager = dep.get("manager")
        if manager not in ("conda", "pip"):
            raise self.fail(f"{where}.manager is {manager!r:.40}, expected conda or pip")
        if dep.get("platform") != platform:
            raise self.fail(f"{where}.platform is {dep.get('platform')!r:.40}, not {platform}")
        depends = self.strings(dep.get("dependencies", {}), f"{where}.dependencies")
        for key in ("category", "build"):
            if dep.get(key) is not None and not isinstance(dep[key], str):
                raise self.fail(f"{where}.{key} is {_type(dep[key])}, expected a string")
        if not isinstance(dep.get("optional", False), bool):
            raise self.fail(f"{where}.optional is {_type(dep['optional'])}, expected true/false")
        if dep.get("source") is not None:
            raise self.fail(f"{where}.source: gpuenv installs from package[].url only")
        url = self.text(dep.get("url"), f"{where}.url")
        hashes = self.mapping(dep.get("hash"), f"{where}.hash")
        self.known_keys(hashes, {"md5", "sha256"}, f"{where}.hash")
        sha256, md5 = hashes.get("sha256"), hashes.get("md5")
        if sha256 is None:
            raise self.fail(
                f"{where}.hash has no sha256; gpuenv checks every file by sha256"
                + (" (md5 alone is not enough)" if md5 else "")
            )
        check_sha256(sha256, f"{where}.hash.sha256", self.fail)
        if md5 is not None and not is_md5(md5):
            raise self.fail(f"{where}.hash.md5 is not 32 lowercase hex digits")
        if manager == "pip":
            wheel_file_name(url, name, where, self.fail)
            return manager, name, PipEntry(name, version, url, sha256)
        file_name = self.conda_url(url, name, where)
        record: dict[str, Any] = {
            **self.conda_extra(custom, name, file_name, where),
            "name": name,
            "version": version,
            "build": dep.get("build") or "",
            "url": url,
            "md5": md5,
            "sha256": sha256,
            "depends": [f"{k} {v}".strip() for k, v in depends.items()],
        }
        return manager, name, record

    def conda_url(self, url: str, name: str, where: str) -> str:
        filename = url_file_name(url, where, self.fail)
        if not filename.endswith(_CONDA_SUFFIXES):
            raise self.fail(
                f"{where}.url does not name a conda package (.conda or .tar.bz2): {filename!r:.80}"
            )
        return filename

    def custom_json(self, custom: dict[str, str], key: str, holds: str = "") -> Any:
        """custom_metadata[key], parsed as JSON; `holds` names what a missing one should hold."""
        field = f"metadata.custom_metadata.{key}"
        if key not in custom:
            raise self.fail(f"{field} is missing" + (f" ({holds})" if holds else ""))
        try:
            # strict like the other two readers: NaN, 1e999 or deep nesting is no plan
            return strict_json.loads(custom[key])
        except ValueError as exc:
            raise self.fail(f"{field} is not JSON ({exc})") from None

    def conda_extra(
        self, custom: dict[str, str], name: str, file_name: str, where: str
    ) -> dict[str, Any]:
        field = f"metadata.custom_metadata.{_META}conda.{name}"
        extra = self.custom_json(custom, f"{_META}conda.{name}", f"the record fields of {where}")
        extra = self.mapping(extra, field)
        overriding = sorted(set(extra) - set(_CONDA_EXTRA))
        if overriding:
            raise self.fail(
                f"{field} may not set {', '.join(overriding)}: url, hashes, name and version come"
                " from package[] only"
            )
        for key, kind in _CONDA_EXTRA.items():
            value = extra.get(key)
            if key in extra and (not isinstance(value, kind) or isinstance(value, bool)):
                raise self.fail(f"{field}.{key} is {_type(value)}")
        if not all(isinstance(c, str) for c in extra.get("constrains", [])):
            raise self.fail(f"{field}.constrains holds something that is not a string")
        if extra.get("noarch") not in (None, "python", "generic"):
            raise self.fail(f"{field}.noarch is {extra['noarch']!r:.40}")
        subdir = extra.get("subdir")
        if subdir not in (*PLATFORMS, "noarch"):
            raise self.fail(f"{field}.subdir is {subdir!r:.40}, not a conda subdir gpuenv knows")
        if extra.setdefault("file_name", file_name) != file_name:
            raise self.fail(
                f"{field}.file_name {extra['file_name']!r:.80} is not the url's file name"
                f" {file_name!r}"
            )
        return extra


def _load_yaml(raw: bytes, path: Path) -> Any:
    import yaml  # type: ignore[import-untyped]  # conda-lock's own dependency; imported only when a lockfile is read

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(raw, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LockfileError(f"{path} is not a YAML file: {first}") from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise LockfileError(
            f"{path} is not a lockfile gpuenv can read (too deep or too large)"
        ) from None


def _type(value: Optional[object]) -> str:
    if value is None:
        return "missing (or null)"
    if value == "":
        return "empty"
    from gpuenv.fs.type_names import type_name

    return type_name(value, mapping="a mapping")
