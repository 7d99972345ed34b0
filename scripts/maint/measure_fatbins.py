"""Measure the knowledge base's arch lists from the wheels the default index serves.

    .venv/bin/python scripts/maint/measure_fatbins.py scripts/maint/data/fatbins.json \
        [--framework tensorflow] [--release 2.2.3] [--platform linux-64]

For every CUDA build row (one wheel per release and project) it streams the wheel's shared
libraries, reads their fatbin headers (gpuenv.maint.artifacts) and appends the reading to the
JSON file (wheel name, sha256 from the index, SASS/PTX per library, the row's lists and the
differences). Readings already in the file are kept and not repeated, so an interrupted run
resumes. This is what `gpuenv recipes verify --artifacts` prints, saved for review.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gpuenv.index.config import default_index_url
from gpuenv.index.simple import file_sha256s, project_files
from gpuenv.maint.artifacts import LibraryArchs
from gpuenv.maint.verify import Reading, measure, targets
from gpuenv.recipes import load_knowledge_base


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--framework")
    parser.add_argument("--release")
    parser.add_argument("--platform", default="linux-64")
    parser.add_argument(
        "--rejudge",
        action="store_true",
        help="download nothing: judge the saved readings again against the current rows",
    )
    args = parser.parse_args()
    done: list[dict[str, object]] = []
    if args.out.exists():
        done = json.loads(args.out.read_text())["readings"]
    # readings made before per-fatbin counts were recorded are made again (and replaced)
    seen = {
        (r["framework"], r["release"], r["project"], r["platform"])
        for r in done
        if all("carried_by" in lib for lib in r["libraries"])
    }
    if args.rejudge:
        return rejudge(args.out)
    index = default_index_url()
    cache: dict[tuple[str, str], dict[str, str]] = {}

    def cached(getter, kind):  # type: ignore[no-untyped-def]
        def get(idx: str, project: str) -> dict[str, str]:
            key = (kind + idx, project)
            if key not in cache:
                cache[key] = getter(idx, project)
            return cache[key]

        return get

    for target in targets(load_knowledge_base(), args.framework, args.release, args.platform):
        key = (target.framework, target.release, target.project, target.platform)
        if key in seen:
            continue
        start = time.monotonic()
        try:
            reading = measure(target, index, cached(project_files, "f"), cached(file_sha256s, "h"))
        except Exception as exc:  # one unreadable wheel is a finding, not the end of the run
            print(f"{key}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if reading is None:
            print(f"{key}: no wheel on {target.index or index}", file=sys.stderr)
            continue
        row = reading.to_json()
        done = [
            r for r in done if (r["framework"], r["release"], r["project"], r["platform"]) != key
        ]
        done.append(row)
        print(
            f"{key} {reading.wheel} sass={reading.sass} ptx={reading.ptx}"
            f" diff={row['differences']} ({time.monotonic() - start:.0f}s)",
            file=sys.stderr,
            flush=True,
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"schema": 1, "readings": done}, indent=1) + "\n")
    return 0


def rejudge(path: Path) -> int:
    """Recompute each saved reading's lists and differences from its per-fatbin counts."""
    doc = json.loads(path.read_text())
    by_key = {
        (t.framework, t.release, t.project, t.platform): t
        for t in targets(load_knowledge_base(), platform="linux-64")
        + targets(load_knowledge_base(), platform="win-64")
        if t.index is None
    }
    out = []
    for r in doc["readings"]:
        target = by_key.get((r["framework"], r["release"], r["project"], r["platform"]))
        if target is None or not all("carried_by" in lib for lib in r["libraries"]):
            print(f"kept as is: {r['wheel']}", file=sys.stderr)
            out.append(r)
            continue
        libs = [LibraryArchs.from_json(lib) for lib in r["libraries"]]
        reading = Reading(target=target, wheel=r["wheel"], sha256=r["sha256"], libraries=libs)
        out.append(reading.to_json())
        print(f"{r['wheel']}: {reading.differences() or 'matches'}", file=sys.stderr)
    path.write_text(json.dumps({"schema": 1, "readings": out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
