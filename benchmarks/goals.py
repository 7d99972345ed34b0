"""Every goal of the speed issue, measured in one run: gpuenv against what a user would run.

    .venv/bin/python benchmarks/goals.py [--quick] [--index URL] [--torch-wheel FILE]
                                         [--default-index] [--before DIR]

--quick: 2 rounds of each, stand-in packages, no network, no bytecode step: CI runs it so the
benchmarks cannot rot. Without it: 20 rounds of the quick commands, 10 of lock, 5 of install and setup.

Before measuring, the bytecode of gpuenv's own environment is compiled (`compileall`), as any
Python does on a package's first import; a machine that sets PYTHONDONTWRITEBYTECODE (this
project's VM does) would otherwise recompile gpuenv, click and its other imports from source
on every run, which no ordinary installation does. The environments the benchmarks install are
left as uv makes them (no bytecode), on both sides alike.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import _common
import cli_bench
import install_bench
import lock_bench
from _common import REPO, print_table
from _standins import PY, make_stack

from gpuenv.uv.binary import find_uv


def compile_own_bytecode() -> None:
    for folder in {sysconfig.get_paths()["purelib"], str(REPO / "installer")}:
        compileall.compile_dir(folder, quiet=2, workers=0)


def describe() -> str:
    uv = subprocess.run([find_uv(), "--version"], capture_output=True, text=True).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load average {load}; Python {platform.python_version()}; {uv};"
        f" PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--index", help="lock and install from this index (default: stand-ins)")
    parser.add_argument("--torch-wheel", type=Path, help="setup torch from this CPU wheel")
    parser.add_argument(
        "--default-index",
        action="store_true",
        help="also lock from the default index over the network (skipped if unreachable)",
    )
    parser.add_argument("--rounds", type=int, help="rounds of every row (default: per row)")
    parser.add_argument(
        "--before",
        type=Path,
        help="also time the gpuenv of this source tree (e.g. `git archive BASE | tar -x -C DIR`)"
        " in every round, run with this environment's interpreter",
    )
    args = parser.parse_args()
    if args.before:
        _common.BEFORE = args.before.resolve()
        compileall.compile_dir(str(args.before / "installer"), quiet=2, workers=0)
    if args.torch_wheel and not args.index:
        sys.exit("--torch-wheel needs --index (where torch's dependencies come from)")
    if not args.quick:  # quick mode checks that everything runs; its figures are not the goals'
        compile_own_bytecode()
    print(describe(), file=sys.stderr)
    quick = args.quick
    rounds = (lambda n: 2) if quick else (lambda n: args.rounds or n)
    with tempfile.TemporaryDirectory(prefix="gpuenv-goals-") as tmp:
        work = Path(tmp)
        index = None if quick else args.index
        stack = make_stack(work / "stack", index, None if quick else args.torch_wheel, PY)
        jax_index = stack.index if stack.framework == "jax" else (index or stack.index)
        (work / "install").mkdir()
        rows = cli_bench.rows(rounds(20))
        rows += lock_bench.rows(work / "lock", jax_index, rounds(10))
        rows += lock_bench.rows(work / "lock-cold", jax_index, rounds(6), cold=True)
        if args.default_index and not quick:
            rows += lock_bench.rows(work / "lock-default", None, rounds(10))
            rows += lock_bench.rows(work / "lock-default-cold", None, rounds(6), cold=True)
            rows += lock_bench.rows(
                work / "lock-default-tf", None, rounds(6), case=lock_bench.TENSORFLOW_WSL2
            )
        if stack.framework != "jax":  # jax's rows too: a stack from the default index alone
            jax_stack = make_stack(work / "jax-stack", index, None, PY)
            (work / "install-jax").mkdir()
            rows += install_bench.rows(work / "install-jax", jax_stack, rounds(5))
        rows += install_bench.rows(
            work / "install", stack, rounds(5), noop=stack.framework == "jax"
        )
    print(describe())
    print()
    print_table(rows)
    missed = [r.task for r in rows if not r.met]
    print(
        f"\n{len(rows) - len(missed)} of {len(rows)} goals met"
        + (f"; not met: {', '.join(missed)}" if missed else "")
    )


if __name__ == "__main__":
    main()
