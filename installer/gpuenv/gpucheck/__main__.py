"""`python -m gpuenv.gpucheck run|promote|replay` (scripts/gpu-check.sh calls `run`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

USAGE_EXIT = 2


def _run(args: argparse.Namespace) -> int:
    from gpuenv.gpucheck.run import CheckError, archive, run_check
    from gpuenv.gpucheck.summary import render

    try:
        result = run_check(args.out, budget_s=args.budget, pythons=args.python or ())
        text = render(result)
        (args.out / "summary.txt").write_text(text, encoding="utf-8")
        (args.out / "report.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
        if args.archive:
            archive(args.out)
    except (CheckError, OSError) as exc:  # OSError: a full disk, a read-only folder
        print(f"gpu-check: {exc}", file=sys.stderr)
        return USAGE_EXIT
    sys.stdout.write(text)
    return result.exit_status


def _promote(args: argparse.Namespace) -> int:
    from gpuenv.gpucheck.promote import PromoteError, promote, replay

    try:
        target = promote(args.source, args.name, args.fixtures, args.note, args.force)
    except (PromoteError, OSError) as exc:
        print(f"gpu-check: {exc}", file=sys.stderr)
        return USAGE_EXIT
    print(f"recorded fixtures in {target}; edit its SOURCE to name the machine, then commit")
    problems = replay(target)
    for p in problems:
        print(f"  replay: {p}")
    return 1 if problems else 0


def _replay(args: argparse.Namespace) -> int:
    from gpuenv.gpucheck.promote import replay

    folder: Path = args.folder
    if folder.is_symlink() or not folder.is_dir():
        print(f"gpu-check: {folder}: not a fixture folder", file=sys.stderr)
        return USAGE_EXIT
    problems = replay(folder)
    for p in problems:
        print(p)
    print("replay: parsers agree with the recording" if not problems else "replay: differences")
    return 1 if problems else 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpuenv.gpucheck",
        description="Record and check gpuenv's GPU paths on a machine with an NVIDIA GPU.",
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the check (what scripts/gpu-check.sh runs)")
    r.add_argument("--out", type=Path, default=Path("gpu-check-out"))
    r.add_argument("--budget", type=float, default=240.0, help="seconds for the whole check")
    r.add_argument("--python", action="append", help="also verify this interpreter (repeatable)")
    r.add_argument("--archive", action="store_true", help="pack the output into gpu-check.tar.gz")
    p = sub.add_parser("promote", help="copy a recording into tests/fixtures/detect/NAME")
    p.add_argument("source", type=Path, help="the check's output folder (or its .tar.gz)")
    p.add_argument("name", help="fixture folder name, e.g. h200-580.159.03")
    p.add_argument("--fixtures", type=Path, default=Path("tests/fixtures/detect"))
    p.add_argument("--note", default="", help="a line for SOURCE: where the machine was")
    p.add_argument("--force", action="store_true", help="replace an existing folder")
    q = sub.add_parser("replay", help="parse a fixture folder again and compare")
    q.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        if not 10 <= args.budget <= 600:
            parser.error("--budget must be between 10 and 600 seconds")
        return _run(args)
    if args.cmd == "promote":
        return _promote(args)
    return _replay(args)


if __name__ == "__main__":
    sys.exit(main())
