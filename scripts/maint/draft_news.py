"""Draft knowledge-base rows for every new upstream release that `gpuenv recipes check --online
--json` reported, for a maintainer to review (the weekly job in .github/workflows/knowledge.yml).

Usage: python scripts/maint/draft_news.py FINDINGS.json -o DRAFTS_DIR [--gpuenv CMD]
Exit status: 0 no news, 1 drafts written (someone must review and commit them), 2 bad input or a
draft that failed.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]{0,40}$")


def drafts_asked(findings: object) -> list[tuple[str, str]]:
    """(framework, version) pairs from a findings document; anything malformed is refused."""
    if not isinstance(findings, dict) or not isinstance(findings.get("findings"), list):
        raise ValueError("expected the JSON document of `gpuenv recipes check --online --json`")
    out: list[tuple[str, str]] = []
    for finding in findings["findings"]:
        pair = finding.get("draft") if isinstance(finding, dict) else None
        if pair is None:
            continue
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(p, str) for p in pair)
            or not _NAME.match(pair[0])
            or not _VERSION.match(pair[1])
        ):
            raise ValueError(f"not a framework and a version: {pair!r}")
        out.append((pair[0], pair[1]))
    return sorted(set(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("findings", type=Path)
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--gpuenv", default="gpuenv", help="the gpuenv command to run")
    args = parser.parse_args(argv)
    try:
        asked = drafts_asked(json.loads(args.findings.read_text()))
    except (OSError, ValueError) as exc:
        print(f"draft_news: {args.findings}: {exc}", file=sys.stderr)
        return 2
    if not asked:
        print("draft_news: no new upstream release")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for framework, version in asked:
        command = [*shlex.split(args.gpuenv), "recipes", "draft", framework, version]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"draft_news: {' '.join(command)} failed:\n{done.stderr}", file=sys.stderr)
            return 2
        target = args.out / f"{framework}-{version}.toml"
        target.write_text(done.stdout)
        print(f"draft_news: {framework} {version} drafted in {target}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
