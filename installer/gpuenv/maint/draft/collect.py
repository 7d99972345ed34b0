"""Reading the indexes and the wheels: which builds a release has, and what their METADATA,
`torch/version.py` and TensorFlow's `build_info.py` say (range requests, nothing installed)."""

from __future__ import annotations

import ast
import re
from email.parser import HeaderParser
from typing import Optional

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuenv.index.remote_wheel import RangeReader, WheelReadError, read_member, read_range
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.maint.draft.model import (
    CUDA_LIB,
    PLATFORM_ORDER,
    Build,
    Facts,
    Getter,
    Lister,
)
from gpuenv.recipes.model import Framework


def known_variant_indexes(fw: Framework) -> list[str]:
    return sorted({b.index for r in fw.releases for b in r.builds if b.index and b.local})


def list_files(index: str, project: str) -> dict[str, str]:
    from gpuenv.index.simple import project_files

    return project_files(index, project)


def get_small(url: str) -> Optional[bytes]:
    try:
        return read_range(url, 0, 4 * 1024 * 1024)
    except (OSError, WheelReadError):
        return None
    except Exception as exc:  # requests' errors: a missing .metadata file is no error
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            return None  # absent (404, or 403 from some file hosts): read the wheel instead
        raise


def collect(
    listing: Lister, index: str, project: str, wanted: Version, variant_index: Optional[str]
) -> list[Build]:
    try:
        files = listing(index, project)
    except FileNotFoundError:
        return []
    by_key: dict[tuple[str, str], Build] = {}  # (local, platform): builds differ per platform
    for name, url in sorted(files.items()):
        if not name.endswith(".whl") or "/" in name or "\\" in name:
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if Version(version.public) != wanted or version.is_devrelease:
            continue
        local = f"+{version.local}" if version.local else ""
        for tag in tags:
            # a pure wheel (jax) stands for every platform: kept as "any" to read its METADATA
            for platform in platform_of(tag.platform) or (
                ("any",) if tag.platform == "any" else ()
            ):
                build = by_key.setdefault(
                    (local, platform),
                    Build(variant=local.lstrip("+") or "default", local=local, index=variant_index),
                )
                build.platforms.add(platform)
                build.sample.setdefault(platform, (name, url))
                if tag.interpreter.startswith("cp") and not tag.abi.endswith("t"):
                    digits = tag.interpreter[2:]
                    build.pythons.setdefault(platform, set()).add(f"{digits[0]}.{digits[1:]}")
    return [b for b in by_key.values() if b.platforms]


def merge(builds: list[Build], facts: dict[int, Facts]) -> list[Build]:
    """One row per build that reads the same on every platform it was found for."""
    merged: dict[tuple[object, ...], Build] = {}
    for b in builds:
        f = facts[id(b)]
        key = (b.index, b.local, f.cuda, f.cudnn, f.pip_libs, f.sass, f.ptx)
        if key not in merged:
            merged[key] = b
            continue
        into = merged[key]
        into.platforms |= b.platforms
        for platform, versions in b.pythons.items():
            into.pythons.setdefault(platform, set()).update(versions)
        for platform, sample in b.sample.items():
            into.sample.setdefault(platform, sample)
    return list(merged.values())


def read_facts(framework: str, build: Build, fetch: Getter, reader: RangeReader) -> Facts:
    platform = next((p for p in (*PLATFORM_ORDER, "any") if p in build.sample), None)
    if platform is None:
        return Facts()
    name, url = build.sample[platform]
    dist, version = name.split("-")[:2]
    sources: list[str] = []
    metadata = fetch(url + ".metadata")
    if metadata is None:
        metadata = member(url, f"{dist}-{version}.dist-info/METADATA", reader)
    pip_libs: tuple[str, ...] = ()
    cudnn: Optional[str] = None
    if metadata is not None:
        pip_libs, cudnn = cuda_pins(metadata)
        sources.append(f"METADATA of {name} (Requires-Dist)")
    cuda: Optional[str] = None
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    if framework == "torch":
        source = member(url, "torch/version.py", reader)
        if source is not None:
            cuda = assigned(source).get("cuda")
            sources.append(f"torch/version.py in {name}")
    elif framework == "tensorflow":
        source = member(url, "tensorflow/python/platform/build_info.py", reader)
        if source is not None:
            info = build_info(source)
            cuda = optional_text(info.get("cuda_version"))
            cudnn = cudnn or optional_text(info.get("cudnn_version"))
            sass, ptx = tf_archs(info.get("cuda_compute_capabilities"))
            sources.append(f"tensorflow/python/platform/build_info.py in {name}")
    return Facts(cuda, cudnn, pip_libs, sass, ptx, tuple(sources))


def member(url: str, member: str, reader: RangeReader) -> Optional[bytes]:
    try:
        return read_member(url, member, reader)
    except (OSError, WheelReadError):
        return None


def cuda_pins(metadata: bytes) -> tuple[tuple[str, ...], Optional[str]]:
    """CUDA library requirements (markers kept) and the cuDNN version a == pin names."""
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    libs = [r.strip() for r in message.get_all("Requires-Dist") or [] if CUDA_LIB.match(r.strip())]
    cudnn = None
    for lib in libs:
        pin = re.match(r"^nvidia-cudnn-cu\d+\s*==\s*([0-9.]+)", lib, re.I)
        if pin:
            cudnn = pin.group(1)
    return tuple(libs), cudnn


def assigned(source: bytes) -> dict[str, Optional[str]]:
    """Top-level `name = 'literal'` assignments of a Python file, parsed, never run."""
    out: dict[str, Optional[str]] = {}
    try:
        tree = ast.parse(source.decode("utf-8", "replace"))
    except SyntaxError:
        return out
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            out[target.id] = value.value if isinstance(value.value, str) else None
    return out


def build_info(source: bytes) -> dict[str, object]:
    """TensorFlow's `build_info = {...}` dict (a literal: read with literal_eval, never run)."""
    try:
        tree = ast.parse(source.decode("utf-8", "replace"))
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "build_info" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def optional_text(value: object) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def tf_archs(value: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """TensorFlow's list: `sm_XY` is SASS; `compute_XY` is SASS plus PTX (TensorFlow's
    configure.py: "compute_XY enables PTX embedding in addition to SASS")."""
    sass: list[str] = []
    ptx: list[str] = []
    for item in value if isinstance(value, list) else []:
        match = re.fullmatch(r"(sm|compute)_(\d+)(\d)", str(item))
        if not match:
            continue
        cc = f"{match.group(2)}.{match.group(3)}"
        sass.append(cc)
        if match.group(1) == "compute":
            ptx.append(cc)
    return tuple(dict.fromkeys(sass)), tuple(dict.fromkeys(ptx))


# --- TOML -----------------------------------------------------------------------------------


EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def metadata_requirements(metadata: bytes) -> list[tuple[str, Optional[str]]]:
    """(requirement without marker, the extra it belongs to or None) of a METADATA file."""
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    out = []
    for line in message.get_all("Requires-Dist") or []:
        requirement, _, marker = line.partition(";")
        extra = EXTRA.search(marker)
        out.append((requirement.strip(), extra.group(1) if extra else None))
    return out


def metadata_of(
    listing: Lister, index: str, project: str, version: Version, fetch: Getter, reader: RangeReader
) -> tuple[Optional[bytes], Optional[Build]]:
    """METADATA of one of the project's wheels for `version`, and what its files cover."""
    try:
        builds = collect(listing, index, project, version, None)
    except FileNotFoundError:
        return None, None
    if not builds:
        return None, None
    merged = builds[0]
    for b in builds[1:]:
        merged.platforms |= b.platforms
        for platform, versions in b.pythons.items():
            merged.pythons.setdefault(platform, set()).update(versions)
        for platform, sample in b.sample.items():
            merged.sample.setdefault(platform, sample)
    name, url = next(iter(merged.sample.values()))
    dist, file_version = name.split("-")[:2]
    metadata = fetch(url + ".metadata") or member(
        url, f"{dist}-{file_version}.dist-info/METADATA", reader
    )
    return metadata, merged
