"""The quick commands: `gpuenv resolve` and `gpuenv detect`, against the interpreter's start-up.

    .venv/bin/python benchmarks/cli_bench.py [--quick] [--rounds N]

resolve must cost at most 1.3x its floor: a process that imports click, json and packaging's
versions and specifiers, the stack the CLI is built on (resolve is pure: no I/O but reading the
knowledge base). detect must answer within 0.3 s with uv on PATH (its baseline is the
interpreter's start-up: there is no other tool that answers the same question).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _common import GPUENV, PYTHON_PASS, Row, clean_env, paired, print_table, run

from gpuenv.uv.binary import find_uv

FLOOR = [sys.executable, "-c", "import click, json, packaging.version, packaging.specifiers"]

RESOLVE = [
    "resolve",
    "torch",
    "tensorflow",
    "--gpu",
    "8.6",
    "--driver",
    "535.183.01",
    "--os",
    "linux",
    "--json",
]


def rows(rounds: int) -> list[Row]:
    env = clean_env()
    # uv on PATH, as with any install of gpuenv: detect used to run `uv python list` then
    env["PATH"] = str(Path(find_uv()).parent) + os.pathsep + env.get("PATH", "")
    for cmd in ([*GPUENV, *RESOLVE], [*GPUENV, "detect", "--json"]):
        run(cmd, env)  # warm: the knowledge base's parsed cache, the OS's file cache
    resolve = paired(
        Row(
            "resolve",
            "gpuenv " + " ".join(RESOLVE),
            "floor: `python -c 'import click, json, packaging.version, packaging.specifiers'`",
            goal_ratio=1.3,
        ),
        lambda: run([*GPUENV, *RESOLVE], env),
        lambda: run(FLOOR, env),
        rounds,
    )
    detect = paired(
        Row(
            "detect --json, uv on PATH",
            "gpuenv detect --json",
            "`python -c pass`",
            goal_seconds=0.3,
        ),
        lambda: run([*GPUENV, "detect", "--json"], env),
        lambda: run(PYTHON_PASS, env),
        rounds,
    )
    return [resolve, detect]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 rounds: does it still run?")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print_table(rows(2 if args.quick else args.rounds))


if __name__ == "__main__":
    main()
