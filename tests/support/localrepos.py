"""Local, offline package repositories for gpuenv's integration tests.

The ``lock`` and ``install`` stages talk to two kinds of repository: a PEP 503
"simple" Python package index (read by uv) and a conda channel (read by
py-rattler).  The test machines cannot reach the real ones, so this module
builds small stand-ins on disk:

* :func:`build_wheel` writes a real, installable wheel with any name, version
  (local versions such as ``2.7.1+cu118`` included) and platform tag;
* :func:`build_simple_index` lays wheels out as a PEP 503 index and returns its
  ``file://`` URL (:func:`serve_directory` serves a directory over loopback
  HTTP for anything that insists on ``http://``);
* :func:`build_conda_package` writes a ``.tar.bz2`` conda package;
* :func:`build_conda_channel` lays packages out as a channel, indexes it with
  py-rattler and returns its ``file://`` URL;
* :func:`rattler_solve` and :func:`rattler_install` drive py-rattler against
  such a channel in a child process (py-rattler can crash at interpreter exit
  after a solve or an install, so it never runs in the test process itself).

All builders are deterministic: the same arguments give byte-identical files,
so hashes recorded in lock files stay stable between runs.  Nothing here needs
the network, and nothing here imports pytest.
"""

from __future__ import annotations

import base64
import bz2
import contextlib
import csv
import hashlib
import html
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from loopback import loopback

__all__ = [
    "CONDA_SUBDIRS",
    "build_conda_channel",
    "build_conda_package",
    "build_simple_index",
    "build_wheel",
    "find_uv",
    "normalize_name",
    "rattler_install",
    "rattler_solve",
    "serve_directory",
    "sha256_file",
    "uv_environment",
]

# 1980-01-01, the earliest time a zip file can hold.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# A fixed build time for conda packages (2024-01-01T00:00:00Z), in milliseconds.
_CONDA_TIMESTAMP_MS = 1_704_067_200_000

#: conda subdir -> (platform, arch) as written in ``info/index.json``.
CONDA_SUBDIRS: dict[str, tuple[str | None, str | None]] = {
    "noarch": (None, None),
    "linux-64": ("linux", "x86_64"),
    "linux-aarch64": ("linux", "aarch64"),
    "linux-ppc64le": ("linux", "ppc64le"),
    "osx-64": ("osx", "x86_64"),
    "osx-arm64": ("osx", "arm64"),
    "win-64": ("win", "x86_64"),
    "win-arm64": ("win", "arm64"),
}


# --------------------------------------------------------------------------- helpers


def normalize_name(name: str) -> str:
    """The PEP 503 normalized form of a project name (``Foo.Bar_baz`` -> ``foo-bar-baz``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist_name(name: str) -> str:
    """The name as it appears in wheel and dist-info file names (``foo-bar`` -> ``foo_bar``)."""
    return re.sub(r"[-_.]+", "_", name)


def sha256_file(path: Path) -> str:
    """Hex sha256 digest of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_hash(data: bytes) -> str:
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _expand_tag(tag: str) -> list[str]:
    """Expand a compressed tag set (``py2.py3-none-any``) into single tags."""
    try:
        pythons, abis, platforms = tag.split("-")
    except ValueError:
        raise ValueError(f"wheel tag must be python-abi-platform, got {tag!r}") from None
    return [
        f"{py}-{abi}-{plat}"
        for py in pythons.split(".")
        for abi in abis.split(".")
        for plat in platforms.split(".")
    ]


# --------------------------------------------------------------------------- wheels


def build_wheel(
    out_dir: Path,
    name: str,
    version: str,
    *,
    requires: Sequence[str] = (),
    requires_python: str | None = None,
    tag: str = "py3-none-any",
    extras: Mapping[str, Sequence[str]] | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write a real, installable wheel and return its path.

    Arguments:
        out_dir: Folder to write the wheel into (created if missing).
        name: Project name, e.g. ``"torch"`` or ``"nvidia-cudnn-cu11"``.
        version: Version, local versions included (``"2.7.1+cu118"``).
        requires: ``Requires-Dist`` entries, markers allowed
            (``"numpy>=1.22; python_version >= '3.10'"``).
        requires_python: ``Requires-Python`` specifier, e.g. ``">=3.9"``.
        tag: Wheel tag (compressed tag sets allowed), e.g. ``"py3-none-any"``,
            ``"cp311-cp311-manylinux_2_28_x86_64"`` or ``"cp310-cp310-win_amd64"``.
        extras: Extra name -> its requirements; each becomes ``Provides-Extra``
            plus ``Requires-Dist: req; extra == "name"``.
        files: Payload, path inside the wheel -> text.  When omitted the wheel
            holds ``{name_underscored}/__init__.py`` defining ``__version__``.

    The wheel is byte-for-byte reproducible: entries are written in a fixed
    order with a fixed timestamp and fixed permissions.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    dist = _dist_name(name)
    tags = _expand_tag(tag)
    dist_info = f"{dist}-{version}.dist-info"
    filename = f"{dist}-{version}-{tag}.whl"

    payload: dict[str, str]
    if files is None:
        module = dist.lower()
        payload = {
            f"{module}/__init__.py": (
                f'"""Stand-in for {name} {version}, built by gpuenv tests."""\n\n'
                f'__version__ = "{version}"\n'
            )
        }
    else:
        payload = dict(files)

    meta_lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta_lines.append(f"Summary: Test stand-in for {name}")
    if requires_python is not None:
        meta_lines.append(f"Requires-Python: {requires_python}")
    meta_lines.extend(f"Requires-Dist: {req}" for req in requires)
    for extra, extra_reqs in (extras or {}).items():
        meta_lines.append(f"Provides-Extra: {extra}")
        for req in extra_reqs:
            if ";" in req:
                req_part, marker = req.split(";", 1)
                line = f'{req_part.strip()}; ({marker.strip()}) and extra == "{extra}"'
            else:
                line = f'{req.strip()}; extra == "{extra}"'
            meta_lines.append(f"Requires-Dist: {line}")
    metadata = "\n".join(meta_lines) + "\n\n"

    pure = all(t.endswith("-none-any") for t in tags)
    wheel_lines = [
        "Wheel-Version: 1.0",
        "Generator: gpuenv-tests (1.0)",
        f"Root-Is-Purelib: {'true' if pure else 'false'}",
    ]
    wheel_lines.extend(f"Tag: {t}" for t in tags)
    wheel_meta = "\n".join(wheel_lines) + "\n\n"

    entries: list[tuple[str, bytes]] = [
        (path, text.encode("utf-8")) for path, text in sorted(payload.items())
    ]
    entries.append((f"{dist_info}/METADATA", metadata.encode("utf-8")))
    entries.append((f"{dist_info}/WHEEL", wheel_meta.encode("utf-8")))

    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in entries:
        writer.writerow([path, _record_hash(data), str(len(data))])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8")))

    target = out_dir / filename
    with zipfile.ZipFile(target, "w") as zf:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100644 & 0xFFFF) << 16
            info.create_system = 3  # unix, so the permission bits above are honoured
            zf.writestr(info, data)
    return target


WIN311 = "cp311-cp311-win_amd64"


def jax_for_windows(out_dir: Path) -> list[Path]:
    """numpy 1.26.4, jax 0.10.2 and its jaxlib for CPython 3.11 on Windows: the smallest stack
    a `gpuenv lock jax --no-gpu --os windows --python 3.11` plans and uv locks."""
    return [
        build_wheel(out_dir, "numpy", "1.26.4", tag=WIN311),
        build_wheel(out_dir, "jax", "0.10.2", requires=["jaxlib==0.10.2", "numpy"]),
        build_wheel(out_dir, "jaxlib", "0.10.2", tag=WIN311, requires=["numpy"]),
    ]


def _wheel_metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        for entry in zf.namelist():
            parts = entry.split("/")
            if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
                return zf.read(entry)
    raise ValueError(f"{wheel} has no .dist-info/METADATA")


def _metadata_field(metadata: bytes, field: str) -> str | None:
    for line in metadata.decode("utf-8").splitlines():
        if not line:
            break
        key, _, value = line.partition(":")
        if key.strip().lower() == field.lower():
            return value.strip()
    return None


def build_simple_index(root: Path, wheels: Sequence[Path]) -> str:
    """Lay ``wheels`` out as a PEP 503 index under ``root`` and return its ``file://`` URL.

    Layout::

        root/files/<wheel>                    the wheels (copied)
        root/files/<wheel>.metadata           their METADATA (PEP 658)
        root/simple/index.html                the project list
        root/simple/<normalized>/index.html   one page per project

    Each anchor is ``<a href="../../files/<wheel>#sha256=<hex>"
    data-requires-python="..." data-dist-info-metadata="sha256=..."
    data-core-metadata="sha256=...">``.  The returned URL ends with ``/simple/``
    and can be passed to ``uv --index-url`` as is.  Calling it again on the
    same ``root`` adds to the index.
    """
    files_dir = root / "files"
    simple_dir = root / "simple"
    files_dir.mkdir(parents=True, exist_ok=True)
    simple_dir.mkdir(parents=True, exist_ok=True)

    for wheel in wheels:
        if not wheel.name.endswith(".whl"):
            raise ValueError(f"not a wheel: {wheel}")
        dest = files_dir / wheel.name
        if wheel.resolve() != dest.resolve():
            shutil.copyfile(wheel, dest)
        (files_dir / f"{wheel.name}.metadata").write_bytes(_wheel_metadata(dest))

    projects: dict[str, list[Path]] = {}
    for wheel in sorted(files_dir.glob("*.whl")):
        name = _metadata_field(_wheel_metadata(wheel), "Name")
        if name is None:
            raise ValueError(f"{wheel} has no Name in its METADATA")
        projects.setdefault(normalize_name(name), []).append(wheel)

    for project, project_wheels in sorted(projects.items()):
        anchors = []
        for wheel in project_wheels:
            metadata = (files_dir / f"{wheel.name}.metadata").read_bytes()
            meta_hash = hashlib.sha256(metadata).hexdigest()
            href = f"../../files/{urllib.parse.quote(wheel.name)}#sha256={sha256_file(wheel)}"
            attrs = [f'href="{html.escape(href)}"']
            requires_python = _metadata_field(metadata, "Requires-Python")
            if requires_python:
                attrs.append(f'data-requires-python="{html.escape(requires_python)}"')
            attrs.append(f'data-dist-info-metadata="sha256={meta_hash}"')
            attrs.append(f'data-core-metadata="sha256={meta_hash}"')
            anchors.append(f"    <a {' '.join(attrs)}>{html.escape(wheel.name)}</a><br/>")
        page = (
            '<!DOCTYPE html>\n<html>\n  <head><meta name="pypi:repository-version" '
            f'content="1.0"><title>Links for {project}</title></head>\n  <body>\n'
            f"    <h1>Links for {project}</h1>\n" + "\n".join(anchors) + "\n  </body>\n</html>\n"
        )
        (simple_dir / project).mkdir(exist_ok=True)
        (simple_dir / project / "index.html").write_text(page, encoding="utf-8")

    listing = "\n".join(f'    <a href="{p}/">{p}</a><br/>' for p in sorted(projects))
    (simple_dir / "index.html").write_text(
        '<!DOCTYPE html>\n<html>\n  <head><meta name="pypi:repository-version" '
        'content="1.0"><title>Simple index</title></head>\n  <body>\n'
        f"{listing}\n  </body>\n</html>\n",
        encoding="utf-8",
    )
    return simple_dir.resolve().as_uri() + "/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on loopback for the duration of the ``with`` block.

    Yields the base URL, ``http://127.0.0.1:PORT/``; ``build_simple_index``'s
    index is then at ``<base>simple/``.  Only 127.0.0.1 is bound.
    """

    def handler(*args: Any, **kwargs: Any) -> _QuietHandler:
        return _QuietHandler(*args, directory=str(root), **kwargs)

    with loopback(handler) as url:
        yield url


# --------------------------------------------------------------------------- uv

#: Environment variables that would point uv at some other index or config.
_UV_REDIRECTS = (
    "UV_INDEX",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_CONFIG_FILE",
    "UV_PYTHON",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
)


def find_uv() -> str | None:
    """The uv binary: next to the running interpreter (a venv's ``bin/``) or on PATH."""
    for candidate in (Path(sys.executable).parent / "uv", Path(sys.executable).parent / "uv.exe"):
        if candidate.is_file():
            return str(candidate)
    return shutil.which("uv")


def uv_environment(cache_dir: Path) -> dict[str, str]:
    """An environment for running uv against local repositories only.

    uv gets its own cache (``UV_CACHE_DIR``), reads no ``uv.toml`` or
    ``pyproject.toml`` settings (``UV_NO_CONFIG``), never downloads a Python
    (``UV_PYTHON_DOWNLOADS=never``), ignores inherited index settings, and
    bypasses proxies for loopback (for :func:`serve_directory`).
    """
    env = {k: v for k, v in os.environ.items() if k not in _UV_REDIRECTS}
    loopback = "127.0.0.1,localhost"
    env.update(
        UV_CACHE_DIR=str(cache_dir),
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
        NO_PROXY=loopback + (f",{env['NO_PROXY']}" if env.get("NO_PROXY") else ""),
        no_proxy=loopback + (f",{env['no_proxy']}" if env.get("no_proxy") else ""),
    )
    return env


# --------------------------------------------------------------------------- conda


def _build_number(build: str) -> int:
    """conda convention: the build number is the trailing run of digits of the build string."""
    match = re.search(r"(\d+)$", build)
    return int(match.group(1)) if match else 0


def _tar_add(tar: tarfile.TarFile, path: str, data: bytes) -> None:
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mtime = _CONDA_TIMESTAMP_MS // 1000
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def build_conda_package(
    out_dir: Path,
    name: str,
    version: str,
    build: str = "0",
    *,
    subdir: str = "noarch",
    depends: Sequence[str] = (),
    constrains: Sequence[str] = (),
    files: Mapping[str, str] | None = None,
    symlinks: Mapping[str, str] | None = None,
) -> Path:
    """Write a ``.tar.bz2`` conda package directly into ``out_dir`` and return its path.

    Arguments:
        out_dir: Folder to write the package into (created if missing).
        name, version, build: The package's identity; the file is
            ``{name}-{version}-{build}.tar.bz2`` and ``build_number`` is the
            build string's trailing digits (``"h1234_3"`` -> 3).
        subdir: ``"noarch"`` (written as ``noarch: generic``) or a platform
            subdir such as ``"linux-64"`` or ``"win-64"``.
        depends: Match specs, e.g. ``["cudatoolkit 11.2.*", "__cuda >=11.2"]``.
        constrains: Run constraints (``info/index.json`` ``constrains``).
        files: Payload, prefix-relative path -> text.  When omitted the
            package holds ``share/gpuenv-test/{name}.txt``.
        symlinks: Payload symlinks, prefix-relative path -> link target
            (``path_type: softlink`` in ``info/paths.json``).

    The archive holds ``info/index.json``, ``info/paths.json``, ``info/files``
    and the payload, with fixed mtimes and owners, so it is reproducible.
    """
    if subdir not in CONDA_SUBDIRS:
        raise ValueError(f"unknown conda subdir {subdir!r}; known: {sorted(CONDA_SUBDIRS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = (
        dict(files)
        if files is not None
        else {f"share/gpuenv-test/{name}.txt": f"{name} {version} {build}\n"}
    )
    platform, arch = CONDA_SUBDIRS[subdir]

    index: dict[str, Any] = {
        "arch": arch,
        "build": build,
        "build_number": _build_number(build),
        "depends": list(depends),
        "license": "MIT",
        "name": name,
        "platform": platform,
        "subdir": subdir,
        "timestamp": _CONDA_TIMESTAMP_MS,
        "version": version,
    }
    if constrains:
        index["constrains"] = list(constrains)
    if subdir == "noarch":
        index["noarch"] = "generic"

    payload_bytes = {path: text.encode("utf-8") for path, text in sorted(payload.items())}
    paths_json = {
        "paths": [
            {
                "_path": path,
                "path_type": "hardlink",
                "sha256": hashlib.sha256(data).hexdigest(),
                "size_in_bytes": len(data),
            }
            for path, data in payload_bytes.items()
        ]
        + [
            {"_path": path, "path_type": "softlink", "size_in_bytes": 0}
            for path in sorted(symlinks or {})
        ],
        "paths_version": 1,
    }
    info_files = "".join(f"{path}\n" for path in [*payload_bytes, *sorted(symlinks or {})])

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _tar_add(tar, "info/files", info_files.encode("utf-8"))
        _tar_add(tar, "info/index.json", _dumps(index))
        _tar_add(tar, "info/paths.json", _dumps(paths_json))
        for path, data in payload_bytes.items():
            _tar_add(tar, path, data)
        for path, target in sorted((symlinks or {}).items()):
            link = tarfile.TarInfo(path)
            link.type = tarfile.SYMTYPE
            link.linkname = target
            link.mtime = _CONDA_TIMESTAMP_MS // 1000
            link.mode = 0o777
            tar.addfile(link)

    target = out_dir / f"{name}-{version}-{build}.tar.bz2"
    target.write_bytes(bz2.compress(raw.getvalue(), 9))
    return target


def _dumps(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _read_index_json(package: Path) -> dict[str, Any]:
    with tarfile.open(package, "r:bz2") as tar:
        member = tar.extractfile("info/index.json")
        if member is None:
            raise ValueError(f"{package} has no info/index.json")
        data: dict[str, Any] = json.loads(member.read())
        return data


def _write_repodata(subdir_dir: Path, subdir: str) -> None:
    """Fallback indexer: repodata.json with md5, sha256 and size for every .tar.bz2."""
    packages: dict[str, Any] = {}
    for package in sorted(subdir_dir.glob("*.tar.bz2")):
        record = _read_index_json(package)
        record["md5"] = hashlib.md5(package.read_bytes()).hexdigest()
        record["sha256"] = sha256_file(package)
        record["size"] = package.stat().st_size
        packages[package.name] = record
    repodata = {
        "info": {"subdir": subdir},
        "packages": packages,
        "packages.conda": {},
        "removed": [],
        "repodata_version": 1,
    }
    (subdir_dir / "repodata.json").write_bytes(_dumps(repodata))


_DONE = "gpuenv-localrepos: done"


def _rattler_index(root: Path) -> bool:
    """Index ``root`` with py-rattler; False if py-rattler is unavailable."""
    script = (
        "import asyncio, os, sys\n"
        "from rattler.index import index_fs\n"
        "asyncio.run(index_fs(sys.argv[1], write_zst=False, write_shards=False, force=True))\n"
        f"print({_DONE!r}, flush=True)\n"
        # Skip interpreter teardown, where py-rattler can crash (see module docstring).
        "os._exit(0)\n"
    )
    try:
        import rattler  # noqa: F401
    except ImportError:
        return False
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_child_env(),
    )
    if _DONE not in proc.stdout:
        raise RuntimeError(
            f"rattler index_fs failed on {root} (exit status {proc.returncode}):\n"
            f"{proc.stdout}\n{proc.stderr}"
        )
    return True


def build_conda_channel(root: Path, packages: Sequence[Path]) -> str:
    """Lay ``packages`` out as a conda channel under ``root`` and return its ``file://`` URL.

    Each package is copied into ``root/<subdir>/`` (the subdir is read from its
    ``info/index.json``); ``root/noarch/`` always exists.  Every subdir gets a
    ``repodata.json``, written by py-rattler's indexer
    (``rattler.index.index_fs``, run in a child process) when py-rattler is
    installed, otherwise by a small built-in indexer.  The URL has no trailing
    slash, e.g. ``file:///tmp/x/channel``.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "noarch").mkdir(exist_ok=True)
    for package in packages:
        if not package.name.endswith(".tar.bz2"):
            raise ValueError(f"only .tar.bz2 conda packages are supported: {package}")
        subdir = str(_read_index_json(package)["subdir"])
        dest_dir = root / subdir
        dest_dir.mkdir(exist_ok=True)
        if package.resolve() != (dest_dir / package.name).resolve():
            shutil.copyfile(package, dest_dir / package.name)

    if _rattler_index(root):
        # index_fs leaves an empty scratch folder behind.
        with contextlib.suppress(OSError):
            (root / ".tmp").rmdir()
    else:
        for subdir_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            _write_repodata(subdir_dir, subdir_dir.name)
    return root.resolve().as_uri()


# --------------------------------------------------------------------------- py-rattler drivers

_RATTLER_DRIVER = r"""
import asyncio, json, os, sys
import rattler
from rattler import BuildString, GenericVirtualPackage, PackageName, Version

args = json.loads(sys.argv[1])

def virtual(spec):
    name, _, rest = spec.partition("=")
    version, _, build = rest.partition("=")
    return GenericVirtualPackage(
        PackageName(name), Version(version or "0"), BuildString(build or "0")
    )

async def main():
    gateway = rattler.Gateway(cache_dir=args["cache_dir"])
    try:
        records = await rattler.solve(
            sources=args["channels"],
            specs=args["specs"],
            gateway=gateway,
            platforms=args["platforms"],
            virtual_packages=[virtual(v) for v in args["virtual_packages"]],
        )
    except Exception as exc:  # report solver failures as data
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    result = {
        "ok": True,
        "records": [
            {
                "name": r.name.normalized,
                "version": str(r.version),
                "build": str(r.build),
                "subdir": str(r.subdir),
                "url": str(r.url),
                "sha256": r.sha256.hex() if r.sha256 else None,
                "md5": r.md5.hex() if r.md5 else None,
                "depends": list(r.depends),
            }
            for r in records
        ],
    }
    if args["prefix"] is not None:
        await rattler.install(
            records,
            target_prefix=args["prefix"],
            cache_dir=args["cache_dir"],
            platform=rattler.Subdir(args["platforms"][0]),
            show_progress=False,
        )
    return result

print(json.dumps(asyncio.run(main())), flush=True)
# Skip interpreter teardown, where py-rattler can crash after a solve or an install.
os._exit(0)
"""


def _child_env() -> dict[str, str]:
    return dict(os.environ)


def rattler_solve(
    channels: Sequence[str],
    specs: Sequence[str],
    *,
    platforms: Sequence[str],
    virtual_packages: Sequence[str] = (),
    cache_dir: Path,
    prefix: Path | None = None,
    timeout: float = 120,
) -> dict[str, Any]:
    """Solve ``specs`` with py-rattler in a child process; install into ``prefix`` if given.

    Arguments:
        channels: Channel URLs (``file://...`` from :func:`build_conda_channel`).
        specs: Match specs, e.g. ``["cudnn 8.1.*"]``.
        platforms: Subdirs to read, target first, e.g. ``["win-64", "noarch"]``;
            the first one is also the platform an install links for.
        virtual_packages: ``name=version[=build]`` strings, e.g.
            ``["__cuda=11.2", "__win=0", "__glibc=2.17"]``.
        cache_dir: Repodata and package cache for this run (keeps ``~`` clean).
        prefix: When given, the solution is installed there (``rattler.install``).

    Returns ``{"ok": True, "records": [{"name", "version", "build", "subdir",
    "url", "sha256", "md5", "depends"}, ...]}`` or ``{"ok": False, "error":
    "..."}`` when the solve fails.  Raises RuntimeError if the child itself
    fails (an install error, a crash).
    """
    args = {
        "channels": list(channels),
        "specs": list(specs),
        "platforms": list(platforms),
        "virtual_packages": list(virtual_packages),
        "cache_dir": str(cache_dir),
        "prefix": str(prefix) if prefix is not None else None,
    }
    proc = subprocess.run(
        [sys.executable, "-c", _RATTLER_DRIVER, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_child_env(),
    )
    last = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    if not last or not last[0].startswith("{"):
        raise RuntimeError(
            f"py-rattler child exited {proc.returncode} without a result:\n"
            f"{proc.stdout}\n{proc.stderr}"
        )
    result: dict[str, Any] = json.loads(last[0])
    return result


def rattler_install(
    channels: Sequence[str],
    specs: Sequence[str],
    prefix: Path,
    *,
    platforms: Sequence[str],
    virtual_packages: Sequence[str] = (),
    cache_dir: Path,
    timeout: float = 120,
) -> dict[str, Any]:
    """Solve and install into ``prefix`` in a child process; see :func:`rattler_solve`."""
    return rattler_solve(
        channels,
        specs,
        platforms=platforms,
        virtual_packages=virtual_packages,
        cache_dir=cache_dir,
        prefix=prefix,
        timeout=timeout,
    )
