"""Run py-rattler in a child process: `python -m gpuenv.conda.rattler_child` < request.json.

py-rattler can crash at interpreter exit after a solve or an install, so gpuenv never runs it
in its own process. The request says what to do; the one JSON line on stdout says how it went;
the process then leaves with os._exit, skipping the teardown that crashes.

Requests:
  {"op": "solve", "channels": [...], "specs": [...], "platform": "win-64",
   "virtual_packages": ["__cuda=11.2", ...], "cache_dir": "..."}
  {"op": "install", "records": [<records from solve or a lockfile>], "prefix": "...",
   "platform": "win-64", "cache_dir": "..."}
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


def _virtual(spec: str) -> Any:
    from rattler import BuildString, GenericVirtualPackage, PackageName, Version

    name, _, rest = spec.partition("=")
    version, _, build = rest.partition("=")
    return GenericVirtualPackage(
        PackageName(name), Version(version or "0"), BuildString(build or "0")
    )


def _noarch(value: Any) -> str | None:
    if value is None or getattr(value, "none", False):
        return None
    return "python" if getattr(value, "python", False) else "generic"


def _record_json(r: Any) -> dict[str, Any]:
    return {
        "name": r.name.normalized,
        "version": str(r.version),
        "build": str(r.build),
        "build_number": int(r.build_number),
        "subdir": str(r.subdir),
        "url": str(r.url),
        "channel": str(r.channel) if r.channel else "",
        "file_name": str(r.file_name),
        "sha256": r.sha256.hex() if r.sha256 else None,
        "md5": r.md5.hex() if r.md5 else None,
        "depends": list(r.depends),
        "constrains": list(r.constrains),
        "size": r.size,
        "noarch": _noarch(r.noarch),
    }


async def _solve(req: dict[str, Any]) -> dict[str, Any]:
    import rattler

    gateway = rattler.Gateway(cache_dir=req["cache_dir"])
    records = await rattler.solve(
        sources=req["channels"],
        specs=req["specs"],
        gateway=gateway,
        platforms=[req["platform"], "noarch"],
        virtual_packages=[_virtual(v) for v in req.get("virtual_packages", [])],
    )
    return {
        "ok": True,
        "records": sorted((_record_json(r) for r in records), key=lambda r: r["name"]),
    }


def _to_record(data: dict[str, Any]) -> Any:
    import rattler

    def digest(key: str) -> bytes | None:
        return bytes.fromhex(data[key]) if data.get(key) else None

    record = rattler.PackageRecord(
        name=data["name"],
        version=rattler.VersionWithSource(data["version"]),
        build=rattler.BuildString(data["build"]),
        build_number=int(data.get("build_number", 0)),
        subdir=data["subdir"],
        depends=data.get("depends", []),
        constrains=data.get("constrains", []),
        md5=digest("md5"),
        sha256=digest("sha256"),
        size=data.get("size"),
        noarch=rattler.NoArchType(data["noarch"]) if data.get("noarch") else None,
    )
    return rattler.RepoDataRecord(
        package_record=record,
        file_name=data["file_name"],
        url=data["url"],
        channel=data.get("channel") or data["url"].rsplit("/", 2)[0],
    )


async def _install(req: dict[str, Any]) -> dict[str, Any]:
    import rattler

    records = [_to_record(r) for r in req["records"]]
    await rattler.install(
        records,
        target_prefix=req["prefix"],
        cache_dir=req["cache_dir"],
        platform=rattler.Subdir(req["platform"]),
        show_progress=False,
    )
    return {"ok": True, "installed": len(records)}


def main() -> None:
    req = json.loads(sys.stdin.read())
    try:
        op = {"solve": _solve, "install": _install}[req["op"]]
        result = asyncio.run(op(req))
    except Exception as exc:  # every failure is data for the parent
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
