"""Every answer of the resolver over a grid of machines and requests, one JSON line each: run it
before and after a change that must not change behaviour, and compare the two files.

    python scripts/maint/resolve_dump.py -o before.jsonl   (on the old revision)
    python scripts/maint/resolve_dump.py -o after.jsonl && cmp before.jsonl after.jsonl

The grid: every compute capability the knowledge base names (and no GPU), drivers at the
floors and branch edges, each OS and CPU, requests alone and together, with and without a
Python pin. A refusal is recorded as its error's class and message.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DRIVERS = (
    None,
    "390.157",
    "418.39",
    "440.33",
    "450.51.05",
    "450.80.02",
    "451.48",
    "452.39",
    "457.49",
    "470.256.02",
    "472.50",
    "510.47.03",
    "525.60.13",
    "527.41",
    "528.33",
    "535.183.01",
    "550.54.14",
    "560.35.03",
    "570.26",
    "572.16",
    "575.51.03",
    "580.65.06",
    "581.57",
    "590.44.01",
)
PLACES = (("linux", "x86_64"), ("linux", "aarch64"), ("windows", "x86_64"), ("wsl", "x86_64"))
REQUESTS = (
    ("torch",),
    ("tensorflow",),
    ("jax",),
    ("tensorflow", "torch"),
    ("jax", "torch"),
    ("tensorflow<2.11",),
    ("torch<2",),
    ("tensorflow>=2.16", "jax"),
)
PYTHONS = (None, "3.10")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "installer"))
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.resolve import resolve

    try:
        from gpuenv.machine.describe import describe_machine
    except ImportError:  # revisions before gpuenv.machine became a package
        from gpuenv.describe import describe_machine  # type: ignore[import-not-found,no-redef]

    kb = load_knowledge_base()
    ccs = sorted({cc for g in kb.generations for cc in g.compute_capabilities})
    count = 0
    with args.output.open("w", encoding="utf-8") as out:
        for gpu in (None, *ccs):
            for driver in DRIVERS if gpu else (None,):
                for os_name, arch in PLACES:
                    for reqs in REQUESTS:
                        for python in PYTHONS:
                            key = [gpu, driver, os_name, arch, list(reqs), python]
                            try:
                                machine = describe_machine(
                                    kb, gpu=gpu, driver=driver, os_name=os_name, arch=arch
                                )
                                plan = resolve(machine, reqs, kb=kb, python=python)
                                answer: object = plan.to_json()
                            except Exception as exc:  # the refusal is part of the answer
                                answer = {"error": type(exc).__name__, "message": str(exc)}
                            out.write(json.dumps([key, answer], sort_keys=True) + "\n")
                            count += 1
    print(f"{count} answers -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
