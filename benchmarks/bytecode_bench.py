"""Is installing with uv's `--compile-bytecode` worth it? Install time against first import.

    .venv/bin/python benchmarks/bytecode_bench.py --index URL [--torch-wheel FILE] [--rounds N]

uv installs without compiling bytecode; Python then compiles each module on its first import
(gpuenv's verify, the user's first notebook cell) and writes __pycache__. For each framework,
each round makes two fresh environments from warm caches, one with `uv pip install` and one with
`uv pip install --compile-bytecode`, then times `import FRAMEWORK` twice in each. The imports
run with PYTHONDONTWRITEBYTECODE unset, as on an ordinary machine (where it is set, as on this
project's VM, an environment without bytecode compiles on every import, not just the first).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _common import clean_env, run
from _standins import PY

from gpuenv.uv.binary import find_uv


def measure(
    work: Path, spec: list[str], module: str, compile_: bool, env: dict[str, str]
) -> dict[str, float]:
    uv = find_uv()
    env_dir = work / ("compiled" if compile_ else "plain")
    shutil.rmtree(env_dir, ignore_errors=True)
    out = {"venv": run([uv, "venv", str(env_dir), "--python", PY, "-q"], env)}
    python = str(env_dir / "bin" / "python")
    flags = ["--compile-bytecode"] if compile_ else []
    out["install"] = run([uv, "pip", "install", "-q", "--python", python, *flags, *spec], env)
    out["first import"] = run([python, "-c", f"import {module}"], env)
    out["second import"] = run([python, "-c", f"import {module}"], env)
    shutil.rmtree(env_dir)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", required=True, help="the index to install from")
    parser.add_argument("--torch-wheel", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuenv-bytecode-") as tmp:
        work = Path(tmp)
        env = clean_env(UV_CACHE_DIR=str(work / "uv-cache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        stacks = {"jax": (["--default-index", args.index, "jax[cpu]"], "jax")}
        if args.torch_wheel:
            stacks["torch"] = (["--default-index", args.index, str(args.torch_wheel)], "torch")
        print(
            "| framework | install | env + install | first import | second import |"
            " install + first import |"
        )
        print("|---|---|---:|---:|---:|---:|")
        for name, (spec, module) in stacks.items():
            measure(work, spec, module, False, env)  # warm uv's cache
            samples: dict[bool, list[dict[str, float]]] = {False: [], True: []}
            for r in range(args.rounds):
                for compile_ in (r % 2 == 0, r % 2 != 0):
                    samples[compile_].append(measure(work, spec, module, compile_, env))
                print(f"  {name}: round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
            for compile_ in (False, True):
                med = {
                    k: statistics.median(s[k] for s in samples[compile_])
                    for k in samples[compile_][0]
                }
                both = med["venv"] + med["install"] + med["first import"]
                label = "--compile-bytecode" if compile_ else "plain"
                print(
                    f"| {name} | {label} | {med['venv'] + med['install']:.2f} s |"
                    f" {med['first import']:.2f} s | {med['second import']:.2f} s | {both:.2f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
