"""`gpuenv lock` against the `uv pip compile` a user would run for the same pins.

    .venv/bin/python benchmarks/lock_bench.py [--quick] [--rounds N] [--index URL]
                                              [--default-index]

gpuenv: `gpuenv lock jax --no-gpu --os linux --python 3.11 --exclude-newer none -o FILE`, with
the index probe (the default), warm caches (uv's and gpuenv's, filled by an untimed run first).
Baseline: `uv pip compile` of the plan's requirements (from `gpuenv resolve --json`, untimed),
for the same Python and platform, writing pylock.toml with its hashes, from the same index, with
no pylock.toml left from the round before: uv would read it and prefer its pins, a shortcut
gpuenv does not take (a lock depends on its inputs alone).

`--exclude-newer none`: local indexes publish no upload times, so with its default cut-off gpuenv
would run uv twice (once with the cut-off, once without, and say so); against an index that
publishes them, the cut-off costs uv nothing measurable. Both sides get the index the same way a
user sets it: PIP_INDEX_URL for gpuenv (read from pip's settings), --default-index for uv.

`--default-index` adds the comparison a user meets: both sides with no index settings at all,
so both read uv's and pip's default index over the network (warm caches; uv revalidates what
the index allows it to), for that jax lock and for TensorFlow with its CUDA wheels on WSL2 with a
GeForce RTX 3060 (`gpuenv lock tensorflow --gpu "GeForce RTX 3060" --driver 560.94 --os wsl`).
Skipped, with a line on stderr, when that index cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from _common import GPUENV, Row, clean_env, output, paired, print_table, run
from _standins import PY, standin_index

from gpuenv.lock.targets import uv_python_platform
from gpuenv.uv.binary import find_uv

JAX_CPU = ("jax --no-gpu", ["jax", "--no-gpu", "--os", "linux", "--arch", "x86_64"])
# the second lock row: TensorFlow's CUDA wheels from the default index, planned for a
# GPU described rather than detected
TENSORFLOW_WSL2 = (
    "tensorflow, WSL2 + GeForce RTX 3060",
    ["tensorflow", "--gpu", "GeForce RTX 3060", "--driver", "560.94", "--os", "wsl"],
)


def rows(
    work: Path,
    index: Optional[str],
    rounds: int,
    python: str = PY,
    case: tuple[str, list[str]] = JAX_CPU,
    cold: bool = False,
) -> list[Row]:
    """index None: the default index of uv and pip (the network), as a user without any index
    settings locks; an empty list when it cannot be reached. `case`: what is locked (its label,
    and the flags of `gpuenv lock` and `gpuenv resolve`). `cold`: each run starts with uv's cache
    empty, and gpuenv's caches of what earlier runs learnt (the probe's index answers, the wheels'
    RECORDs, the command line's last request to uv) too; the parsed knowledge base and the
    compiled record classes stay, as a wheel of gpuenv ships the one and the first run of any
    command makes the other, as bytecode."""
    work.mkdir(parents=True, exist_ok=True)
    env = clean_env(
        UV_CACHE_DIR=str(work / "uv-cache"),
        GPUENV_CACHE_DIR=str(work / "gpuenv-cache"),
    )
    if index is not None:
        env["PIP_INDEX_URL"] = index
    label, case_flags = case
    flags = [*case_flags, "--python", python]
    plan = json.loads(output([*GPUENV, "resolve", *flags, "--json"], env))
    if any(p["index"] for p in plan["pip"]):
        sys.exit("this benchmark wants a plan that needs only the default index")
    requirements = work / "requirements.in"
    requirements.write_text(
        "".join(f"{r}\n" for r in [p["requirement"] for p in plan["pip"]] + plan["companions"])
    )
    constraints = work / "constraints.txt"
    constraints.write_text("".join(f"{c}\n" for c in plan["constraints"]))
    uv = [
        find_uv(),
        "pip",
        "compile",
        str(requirements),
        "--constraint",
        str(constraints),
        "--format",
        "pylock.toml",
        "-o",
        str(work / "pylock.toml"),
        "--python-version",
        python,
        "--python-platform",
        uv_python_platform(plan["platform"], plan.get("glibc")),
        *(["--default-index", index] if index is not None else []),
        "--quiet",
    ]
    lock = [*GPUENV, "lock", *flags, "--exclude-newer", "none", "-o", str(work / "env.lock.yml")]
    if index is None and subprocess.run(uv, env=env, capture_output=True).returncode != 0:
        print("  lock from the default index: not reachable, skipped", file=sys.stderr)
        return []
    run(lock, env)  # warm both caches
    run(uv, env)
    where = "local index" if index is not None else "default index (network)"
    row = Row(
        f"lock {label} ({'cold' if cold else 'warm'}), {where}",
        " ".join(["gpuenv", *lock[3:]]),
        "`uv pip compile` (pylock, hashes)",
        goal_ratio=1.25,
    )
    pylock = work / "pylock.toml"

    def uv_from_scratch() -> float:
        # uv reads an existing -o file and prefers its pins (60-100 ms less work on the default
        # index); gpuenv locks from its inputs alone, never from the last lockfile, so the
        # baseline gets no previous output either
        pylock.unlink(missing_ok=True)
        if cold:
            _empty_caches(work)
        return run(uv, env)

    def gpuenv_lock() -> float:
        if cold:
            _empty_caches(work)
        return run(lock, env)

    return [paired(row, gpuenv_lock, uv_from_scratch, rounds)]


def _empty_caches(work: Path) -> None:
    shutil.rmtree(work / "uv-cache", ignore_errors=True)
    for kind in ("index-probe", "wheel-records", "lock-requests"):
        shutil.rmtree(work / "gpuenv-cache" / kind, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 rounds, stand-in index")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--index", help="lock from this index (default: stand-ins built here)")
    parser.add_argument(
        "--default-index",
        action="store_true",
        help="also lock from uv's and pip's default index (the network; skipped if unreachable)",
    )
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    with tempfile.TemporaryDirectory(prefix="gpuenv-lock-bench-") as tmp:
        work = Path(tmp)
        index = args.index if args.index and not args.quick else standin_index(work, PY)
        found = rows(work / "local", index, rounds)
        found += rows(work / "local-cold", index, rounds, cold=True)
        if args.default_index and not args.quick:
            found += rows(work / "default", None, rounds)
            found += rows(work / "default-cold", None, rounds, cold=True)
            found += rows(work / "default-tf", None, rounds, case=TENSORFLOW_WSL2)
        print_table(found)


if __name__ == "__main__":
    main()
