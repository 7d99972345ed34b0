"""The few dependencies the GPU check needs, carried as wheels to a machine with no network.

detect, resolve and verify need only click, packaging, platformdirs and nvidia-ml-py (tomli
below Python 3.11); conda-lock, py-rattler, requests and uv stay behind (they are lazy imports of
lock and install). All of these are pure-Python wheels, so the machine unpacks them with zipfile
into a folder put on PYTHONPATH: no pip, no index, no build.

Standard library only: this module runs before those dependencies are importable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Optional

from gpuenv.fs.safe_paths import is_regular_file

RUNTIME = ("click", "packaging", "platformdirs", "nvidia-ml-py")
BEFORE_311 = ("tomli",)
# platformdirs is carried but not required: the check sets GPUENV_CACHE_DIR, so nothing it runs
# asks platformdirs for a folder (many ML images lack it and have the rest). nvidia-ml-py is
# carried but not required either: without it the NVML probe is skipped and said so, while
# nvidia-smi and /proc, /sys are still recorded and compared.
OPTIONAL = ("platformdirs", "nvidia-ml-py")
MODULES = {
    "click": "click",
    "packaging": "packaging",
    "platformdirs": "platformdirs",
    "nvidia-ml-py": "pynvml",
    "tomli": "tomli",
}
STAMP = ".wheelhouse.json"
# name-version(-build)?-python-abi-platform.whl; the check only unpacks pure wheels
_WHEEL = re.compile(
    r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<tag>[^-]+-[^-]+-[^-]+)\.whl$"
)


class WheelhouseError(Exception):
    """The wheelhouse cannot be made or used; the message says what to do."""


def wanted(python_version: str) -> tuple[str, ...]:
    """The distributions the check needs under Python X.Y."""
    major, minor = (int(p) for p in python_version.split(".")[:2])
    return RUNTIME + (BEFORE_311 if (major, minor) < (3, 11) else ())


def pinned(names: tuple[str, ...]) -> list[str]:
    """name==version for each distribution installed here (the versions gpuenv is tested with)."""
    out = []
    for name in names:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(name)
    return out


def download(wheels: Path, python_version: str = "3.12") -> list[Path]:
    """Fetch the wheels with this interpreter's pip (where there is a network), pure ones only."""
    wheels.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        python_version,
        "--implementation",
        "cp",
        "--platform",
        "manylinux2014_x86_64",
        "--dest",
        str(wheels),
        *pinned(wanted(python_version)),
    ]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WheelhouseError(f"pip download could not run: {exc}") from exc
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise WheelhouseError(
            f"pip download failed ({last}); --prepare needs pip and a network (or pip's index)"
        )
    found = sorted(wheels.glob("*.whl"))
    check_pure(found)
    return found


def check_pure(wheels: list[Path]) -> None:
    """Refuse anything that is not a plain, pure-Python wheel (zipfile can't install the rest)."""
    for wheel in wheels:
        m = _WHEEL.match(wheel.name)
        if m is None or not is_regular_file(wheel):
            raise WheelhouseError(f"{wheel.name}: not a plain wheel file")
        python_tag, abi, plat = m.group("tag").split("-")
        if abi != "none" or plat != "any" or not python_tag.startswith("py3"):
            raise WheelhouseError(
                f"{wheel.name}: not a pure-Python wheel; cannot unpack without pip"
            )


def _digest(wheels: list[Path]) -> str:
    h = hashlib.sha256()
    for wheel in wheels:
        h.update(wheel.name.encode())
        h.update(hashlib.sha256(wheel.read_bytes()).digest())
    return h.hexdigest()


def _safe_member(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name


def unpack(wheels: Path, site: Path) -> bool:
    """Unpack every wheel of `wheels` into `site` (once per wheel set). False: no wheels there."""
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not found:
        return False
    check_pure(found)
    digest = _digest(found)
    stamp = site / STAMP
    try:
        if json.loads(stamp.read_text()).get("digest") == digest:
            return True
    except (OSError, ValueError, AttributeError):
        pass
    site.mkdir(parents=True, exist_ok=True)
    for wheel in found:
        try:
            with zipfile.ZipFile(wheel) as zf:
                bad = [n for n in zf.namelist() if not _safe_member(n)]
                if bad:
                    raise WheelhouseError(f"{wheel.name}: member {bad[0]!r} leaves the folder")
                zf.extractall(site)
        except zipfile.BadZipFile as exc:
            raise WheelhouseError(f"{wheel.name}: not a zip file ({exc})") from exc
    stamp.write_text(json.dumps({"digest": digest, "wheels": [w.name for w in found]}))
    return True


def missing_modules(python_version: Optional[str] = None) -> list[str]:
    """The required distributions this interpreter cannot import."""
    version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
    import importlib.util

    return [
        n
        for n in wanted(version)
        if n not in OPTIONAL and importlib.util.find_spec(MODULES[n]) is None
    ]


def size_bytes(wheels: Path) -> int:
    return sum(w.stat().st_size for w in wheels.glob("*.whl"))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuenv.gpucheck.wheelhouse")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("download", help="fetch the wheels (needs pip and a network)")
    p.add_argument("--wheels", type=Path, required=True)
    p.add_argument("--python-version", default="3.12")
    u = sub.add_parser("unpack", help="unpack the carried wheels into a folder for PYTHONPATH")
    u.add_argument("--wheels", type=Path, required=True)
    u.add_argument("--site", type=Path, required=True)
    sub.add_parser("missing", help="print the needed distributions this Python lacks")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "download":
            if not re.fullmatch(r"3\.\d+", args.python_version):
                parser.error("--python-version must be X.Y")
            found = download(args.wheels, args.python_version)
            total = size_bytes(args.wheels)
            print(f"{len(found)} wheels, {total / 1024:.0f} KiB in {args.wheels}:")
            for wheel in found:
                print(f"  {wheel.name}")
        elif args.cmd == "unpack":
            if not unpack(args.wheels, args.site):
                print(f"no wheels in {args.wheels}", file=sys.stderr)
                return 1
        else:
            print(" ".join(missing_modules()))
    except (WheelhouseError, OSError) as exc:
        print(f"gpu-check: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
