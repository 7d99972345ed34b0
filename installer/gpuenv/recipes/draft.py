"""`gpuenv recipes draft FRAMEWORK VERSION`: rows for a new release, drafted from its artifacts.

What the index and the wheels say, read without installing anything:
- the file list of the default index and of each per-variant index the knowledge base already
  uses for the framework (and any `--index` given): platforms and Python versions per build;
- each build's METADATA (PEP 658 `.metadata` file when the index has one, else the member read
  out of the wheel with range requests): CUDA library pins (`pip_libs`, the cuDNN version);
- `torch/version.py` (CUDA version) and TensorFlow's `tensorflow/python/platform/build_info.py`
  (CUDA, cuDNN, compiled architectures), read with range requests into the wheel;
- for jax, its pure wheel's extras (cuda12, cuda13), the jaxlib pin and files, and each CUDA
  plugin's METADATA ("with-cuda" requirements).

The result is TOML for a maintainer to review: every row says where its facts come from, rows
stay `verified = false`, and what the artifacts cannot tell (torch's architecture list, the
release date) is left as a TODO that the loader refuses until someone fills it in.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from email.parser import HeaderParser
from typing import Optional

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import Framework
from gpuenv.recipes.remote_wheel import RangeReader, WheelReadError, read_member, read_range

# index URL, project -> {file name: absolute URL}
Lister = Callable[[str, str], dict[str, str]]
# URL -> bytes of the whole (small) file, or None when absent
Getter = Callable[[str], Optional[bytes]]

_PLATFORM_ORDER = ("linux-64", "linux-aarch64", "win-64", "osx-arm64", "osx-64")
_CUDA_LIB = re.compile(r"^nvidia-[a-z0-9-]+-cu\d+", re.I)


class DraftError(GpuenvError, ValueError):
    """Nothing to draft (unknown framework, no such release on the indexes)."""

    exit_code = USAGE_EXIT


@dataclass
class _Build:
    variant: str
    local: str
    index: Optional[str]  # None: the default index
    platforms: set[str] = field(default_factory=set)
    pythons: dict[str, set[str]] = field(default_factory=dict)
    sample: dict[str, tuple[str, str]] = field(default_factory=dict)  # platform -> (name, url)


@dataclass(frozen=True)
class _Facts:
    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    pip_libs: tuple[str, ...] = ()
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


def draft(
    kb: KnowledgeBase,
    framework: str,
    version: str,
    default_index: str,
    *,
    extra_indexes: Sequence[str] = (),
    variant_indexes: Optional[Sequence[str]] = None,
    lister: Optional[Lister] = None,
    getter: Optional[Getter] = None,
    reader: RangeReader = read_range,
) -> str:
    """TOML rows for `framework` `version`, for review. `variant_indexes`: the per-variant
    indexes to read (default: those the knowledge base records for the framework); one that
    does not answer is skipped with a comment in the draft."""
    fw = kb.framework(framework)
    try:
        wanted = Version(version)
    except InvalidVersion as exc:
        raise DraftError(f"{version!r} is not a version") from exc
    if wanted.local:
        raise DraftError(f"{version!r}: give the release's public version, without +local")
    listing = lister or _list_files
    fetch = getter or _get_small
    if framework == "jax":
        return _draft_jax(fw, wanted, default_index, listing, fetch, reader)
    project = fw.name
    builds: list[_Build] = list(_collect(listing, default_index, project, wanted, None))
    skipped: list[str] = []
    indexes = _variant_indexes(fw) if variant_indexes is None else list(variant_indexes)
    for index in dict.fromkeys([*indexes, *extra_indexes]):
        try:
            found = _collect(listing, index, project, wanted, index)
        except OSError as exc:  # requests' errors are OSErrors: an unreachable variant index
            skipped.append(f"# not read (no answer): {index} ({type(exc).__name__})")
            continue
        builds += [b for b in found if b.local]
    if not builds:
        raise DraftError(f"no {project} {wanted} wheels on the default index or its build indexes")
    facts = {id(b): _facts(framework, b, fetch, reader) for b in builds}
    builds = _merge(builds, facts)
    return "\n".join(skipped) + ("\n" if skipped else "") + _render(fw, wanted, builds, facts)


def _variant_indexes(fw: Framework) -> list[str]:
    return sorted({b.index for r in fw.releases for b in r.builds if b.index and b.local})


def _list_files(index: str, project: str) -> dict[str, str]:
    from gpuenv.index.simple import project_files

    return project_files(index, project)


def _get_small(url: str) -> Optional[bytes]:
    try:
        return read_range(url, 0, 4 * 1024 * 1024)
    except (OSError, WheelReadError):
        return None
    except Exception as exc:  # requests' errors: a missing .metadata file is no error
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            return None  # absent (404, or 403 from some file hosts): read the wheel instead
        raise


def _collect(
    listing: Lister, index: str, project: str, wanted: Version, variant_index: Optional[str]
) -> list[_Build]:
    try:
        files = listing(index, project)
    except FileNotFoundError:
        return []
    by_key: dict[tuple[str, str], _Build] = {}  # (local, platform): builds differ per platform
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
                    _Build(
                        variant=local.lstrip("+") or "default", local=local, index=variant_index
                    ),
                )
                build.platforms.add(platform)
                build.sample.setdefault(platform, (name, url))
                if tag.interpreter.startswith("cp") and not tag.abi.endswith("t"):
                    digits = tag.interpreter[2:]
                    build.pythons.setdefault(platform, set()).add(f"{digits[0]}.{digits[1:]}")
    return [b for b in by_key.values() if b.platforms]


def _merge(builds: list[_Build], facts: dict[int, _Facts]) -> list[_Build]:
    """One row per build that reads the same on every platform it was found for."""
    merged: dict[tuple[object, ...], _Build] = {}
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


def _facts(framework: str, build: _Build, fetch: Getter, reader: RangeReader) -> _Facts:
    platform = next((p for p in (*_PLATFORM_ORDER, "any") if p in build.sample), None)
    if platform is None:
        return _Facts()
    name, url = build.sample[platform]
    dist, version = name.split("-")[:2]
    sources: list[str] = []
    metadata = fetch(url + ".metadata")
    if metadata is None:
        metadata = _member(url, f"{dist}-{version}.dist-info/METADATA", reader)
    pip_libs: tuple[str, ...] = ()
    cudnn: Optional[str] = None
    if metadata is not None:
        pip_libs, cudnn = _cuda_pins(metadata)
        sources.append(f"METADATA of {name} (Requires-Dist)")
    cuda: Optional[str] = None
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    if framework == "torch":
        text = _member(url, "torch/version.py", reader)
        if text is not None:
            cuda = _assigned(text).get("cuda")
            sources.append(f"torch/version.py in {name}")
    elif framework == "tensorflow":
        text = _member(url, "tensorflow/python/platform/build_info.py", reader)
        if text is not None:
            info = _build_info(text)
            cuda = _text(info.get("cuda_version"))
            cudnn = cudnn or _text(info.get("cudnn_version"))
            sass, ptx = _tf_archs(info.get("cuda_compute_capabilities"))
            sources.append(f"tensorflow/python/platform/build_info.py in {name}")
    return _Facts(cuda, cudnn, pip_libs, sass, ptx, tuple(sources))


def _member(url: str, member: str, reader: RangeReader) -> Optional[bytes]:
    try:
        return read_member(url, member, reader)
    except (OSError, WheelReadError):
        return None


def _cuda_pins(metadata: bytes) -> tuple[tuple[str, ...], Optional[str]]:
    """CUDA library requirements (markers kept) and the cuDNN version a == pin names."""
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    libs = [r.strip() for r in message.get_all("Requires-Dist") or [] if _CUDA_LIB.match(r.strip())]
    cudnn = None
    for lib in libs:
        pin = re.match(r"^nvidia-cudnn-cu\d+\s*==\s*([0-9.]+)", lib, re.I)
        if pin:
            cudnn = pin.group(1)
    return tuple(libs), cudnn


def _assigned(source: bytes) -> dict[str, Optional[str]]:
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


def _build_info(source: bytes) -> dict[str, object]:
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


def _text(value: object) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _tf_archs(value: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
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


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _list(items: Iterable[str]) -> str:
    return "[" + ", ".join(_q(i) for i in items) + "]"


def _py_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _render(fw: Framework, version: Version, builds: list[_Build], facts: dict[int, _Facts]) -> str:
    name = fw.name
    default = [b for b in builds if b.index is None]
    pythons: dict[str, set[str]] = {}
    for b in default or builds:
        for platform, versions in b.pythons.items():
            pythons.setdefault(platform, set()).update(versions)
    files = sorted({n for b in builds for n, _ in b.sample.values()})
    lines = [
        f"# Drafted by `gpuenv recipes draft {name} {version}`: review every row against its",
        "# source, fill in the TODOs, then set verified = true where you checked the artifact.",
        "",
    ]
    archsets: list[str] = []
    body = [
        "[[release]]",
        f"version = {_q(str(version))}",
        "# released = YYYY-MM-DD   TODO: the release date (the index's upload time of its files)",
        f"source = {_q('file lists of the indexes (wheel names: ' + ', '.join(files[:3]) + (', ...' if len(files) > 3 else '') + ')')}",
        "verified = false",
        f"note = {_q('drafted from the index and the wheels; review before use')}",
        "[release.python]",
    ]
    for platform in _PLATFORM_ORDER:
        if platform in pythons:
            body.append(f"{platform} = {_list(sorted(pythons[platform], key=_py_key))}")
    for b in builds:
        f = facts[id(b)]
        variant = _variant(name, b, f)
        body += ["", "[[release.build]]", f"variant = {_q(variant)}"]
        body.append(f"platforms = {_list(p for p in _PLATFORM_ORDER if p in b.platforms)}")
        if f.cuda:
            body.append(f"cuda = {_q(f.cuda)}")
            if f.cudnn:
                body.append(f"cudnn = {_q(f.cudnn)}")
            if f.sass or f.ptx:
                key = f"{name}-{version}-{variant}".replace(".", "_")
                archsets += [
                    f"[archsets.{key}]",
                    f"sass = {_list(f.sass)}",
                    f"ptx = {_list(f.ptx)}",
                    f"source = {_q('; '.join(s for s in f.sources if 'build_info' in s))}",
                    "verified = false",
                    "",
                ]
                body.append(f"archs = {_q(key)}")
            else:
                body.append(
                    'archs = "TODO"  # the architecture list is not in the wheel\'s text files:'
                    " read the build script at the release tag"
                )
        if b.index:
            body += [f"index = {_q(b.index)}", f"local = {_q(b.local)}"]
        elif default and f.cuda:
            body.append(f"pypi_default = {_list(p for p in _PLATFORM_ORDER if p in b.platforms)}")
        if f.pip_libs:
            body.append(f"pip_libs = {_list(f.pip_libs)}")
        source = "; ".join(f.sources) or "file list of the index"
        body += [f"source = {_q(source)}", "verified = false"]
    return "\n".join(lines + archsets + body) + "\n"


def _variant(framework: str, build: _Build, facts: _Facts) -> str:
    if build.local:
        return build.local.lstrip("+")
    if facts.cuda is None:
        return "cpu"
    if framework == "tensorflow":
        return "cuda"
    return "cu" + facts.cuda.replace(".", "")


# --- jax: one pure wheel, CUDA through extras and plugin wheels ------------------------------

_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _requirements(metadata: bytes) -> list[tuple[str, Optional[str]]]:
    """(requirement without marker, the extra it belongs to or None) of a METADATA file."""
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    out = []
    for line in message.get_all("Requires-Dist") or []:
        requirement, _, marker = line.partition(";")
        extra = _EXTRA.search(marker)
        out.append((requirement.strip(), extra.group(1) if extra else None))
    return out


def _metadata_of(
    listing: Lister, index: str, project: str, version: Version, fetch: Getter, reader: RangeReader
) -> tuple[Optional[bytes], Optional[_Build]]:
    """METADATA of one of the project's wheels for `version`, and what its files cover."""
    try:
        builds = _collect(listing, index, project, version, None)
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
    metadata = fetch(url + ".metadata") or _member(
        url, f"{dist}-{file_version}.dist-info/METADATA", reader
    )
    return metadata, merged


def _draft_jax(
    fw: Framework,
    version: Version,
    index: str,
    listing: Lister,
    fetch: Getter,
    reader: RangeReader,
) -> str:
    jax_meta, jax_files = _metadata_of(listing, index, "jax", version, fetch, reader)
    if jax_meta is None or jax_files is None:
        raise DraftError(f"no jax {version} wheel with METADATA on the default index")
    jax_wheel = next(iter(jax_files.sample.values()))[0]
    requirements = _requirements(jax_meta)
    jaxlib = next(
        (
            m.group(1)
            for r, extra in requirements
            if extra is None and (m := re.match(r"^jaxlib\s*(?:==|<=|>=)\s*([0-9][0-9.]*)", r))
        ),
        str(version),
    )
    _, jaxlib_files = _metadata_of(listing, index, "jaxlib", Version(jaxlib), fetch, reader)
    pythons = jaxlib_files.pythons if jaxlib_files else {}
    body = [
        f"# Drafted by `gpuenv recipes draft jax {version}`: review every row against its source,",
        "# fill in the TODOs (CUDA, cuDNN and architectures: .bazelrc at the jax-v tag), then set",
        "# verified = true where you checked the artifact.",
        "",
        "[[release]]",
        f"version = {_q(str(version))}",
        "# released = YYYY-MM-DD   TODO: the release date",
        f"jaxlib = {_q(jaxlib)}",
        f"source = {_q(f'METADATA of {jax_wheel}; Python tags of the jaxlib-{jaxlib}-*.whl files')}",
        "verified = false",
        "[release.python]",
    ]
    for platform in _PLATFORM_ORDER:
        if platform in pythons:
            body.append(f"{platform} = {_list(sorted(pythons[platform], key=_py_key))}")
    if jaxlib_files:
        platforms = [p for p in _PLATFORM_ORDER if p in jaxlib_files.platforms]
        body += [
            "",
            "[[release.build]]",
            'variant = "cpu"',
            f"platforms = {_list(platforms)}",
            f"pypi_default = {_list(platforms)}",
            f"source = {_q(f'Wheel files jaxlib-{jaxlib}-cp*-<platform>.whl on the default index')}",
            "verified = false",
        ]
    extras = [e for r, e in requirements if e and re.fullmatch(r"cuda\d+", e)]
    for extra in dict.fromkeys(extras):
        plugin = next(
            (
                re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0]
                for r, e in requirements
                if e == extra and re.match(rf"^jax[-_]{extra}[-_]plugin", r)
            ),
            None,
        )
        if plugin is None:
            continue
        meta, files = _metadata_of(listing, index, plugin, version, fetch, reader)
        if meta is None or files is None:
            continue
        libs = [r for r, e in _requirements(meta) if e == "with-cuda" and _CUDA_LIB.match(r)]
        floor = next(
            (
                m.group(1)
                for lib in libs
                if (m := re.search(r"nvidia-cudnn-cu\d+.*>=\s*(\d+\.\d+\.\d+)", lib))
            ),
            None,
        )
        wheel = next(iter(files.sample.values()))[0]
        body += [
            "",
            "[[release.build]]",
            f"variant = {_q(extra)}",
            f"platforms = {_list(p for p in _PLATFORM_ORDER if p in files.platforms)}",
            'cuda = "TODO"  # HERMETIC_CUDA_VERSION in .bazelrc at the jax-v tag',
        ]
        if floor:
            body.append(
                f"cudnn = {_q(floor)}  # the plugin's floor; the build's own is in .bazelrc"
            )
        body += [
            'archs = "TODO"  # the CUDA compute capabilities in .bazelrc at the jax-v tag',
            'package = "jax"',
            f"extra = {_q(extra)}",
            f"pip_libs = {_list(libs)}",
            f"source = {_q(f'METADATA of {wheel}, Requires-Dist with extra == with-cuda; METADATA of {jax_wheel}, extra {extra}')}",
            "verified = false",
        ]
    return "\n".join(body) + "\n"
