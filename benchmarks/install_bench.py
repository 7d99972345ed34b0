"""Install one lockfile with gpuenv, with `uv pip sync` and with `pip install --require-hashes`.

    .venv/bin/python benchmarks/install_bench.py [--runs 3] [--requirements jax] [--keep DIR]

Locks a real CPU stack once (`gpuenv lock jax --os linux --python 3.11`), writes the same exact
pins with their sha256 (`name==version --hash=sha256:...`) for uv and pip, warms every cache
once, then times, each in a fresh environment with warm caches:

- `gpuenv install LOCKFILE --prefix DIR` (with its default import smoke test, and without it),
  and the no-op: the same install again;
- `uv venv` + `uv pip sync --require-hashes`;
- `python -m venv` + `pip install --require-hashes --no-deps -r`.

pip's configuration on a machine may add find-links folders, extra indexes or constraints, and
gpuenv carries pip's index settings over to uv: every command here runs with
PIP_CONFIG_FILE=/dev/null and without the PIP_*/UV_* index variables, so all three fetch the
same files from the default index.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _common import GPUENV, clean_env, timed

from gpuenv.lock.lockfile import read_lockfile
from gpuenv.lock.pypi import find_uv


def bench_env(root: Path) -> dict[str, str]:
    env = clean_env()
    env.update(
        PIP_CACHE_DIR=str(root / "cache-pip"),
        UV_CACHE_DIR=str(root / "cache-uv"),
        GPUENV_CACHE_DIR=str(root / "cache-gpuenv"),
        GPUENV_HOME=str(root / "gpuenv-home"),
    )
    return env


def write_pins(lockfile: Path, out: Path) -> int:
    locked = read_lockfile(lockfile)
    if locked.conda:
        sys.exit("this benchmark wants a pip-only lockfile")
    lines = [f"{p.name}=={p.version} --hash=sha256:{p.sha256}" for p in locked.pip]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


class Bench:
    def __init__(self, root: Path, lockfile: Path, pins: Path, python: str) -> None:
        self.root, self.lockfile, self.pins, self.python = root, lockfile, pins, python
        self.env = bench_env(root)
        self.uv = find_uv()
        self.count = 0

    def fresh(self) -> Path:
        self.count += 1
        parent = self.root / f"envs-{self.count}"
        parent.mkdir()
        return parent / "env"

    def gpuenv(self, *extra: str) -> dict[str, float]:
        prefix = self.fresh()
        cmd = [*GPUENV, "install", str(self.lockfile), "--prefix", str(prefix), "-q", *extra]
        times = {"total": timed(cmd, self.env), "no-op": timed(cmd, self.env)}
        shutil.rmtree(prefix.parent)
        return times

    def uv_sync(self) -> dict[str, float]:
        env_dir = self.fresh()
        venv = timed([self.uv, "venv", str(env_dir), "--python", self.python, "-q"], self.env)
        python = env_dir / "bin" / "python"
        sync = timed(
            [self.uv, "pip", "sync", "--python", str(python), "--require-hashes", str(self.pins)],
            self.env,
        )
        shutil.rmtree(env_dir.parent)
        return {"env": venv, "install": sync, "total": venv + sync}

    def pip(self) -> dict[str, float]:
        env_dir = self.fresh()
        venv = timed([sys.executable, "-m", "venv", str(env_dir)], self.env)
        python = str(env_dir / "bin" / "python")
        cmd = [python, "-m", "pip", "install", "--require-hashes", "--no-deps", "-r"]
        install = timed([*cmd, str(self.pins)], self.env)
        shutil.rmtree(env_dir.parent)
        return {"env": venv, "install": install, "total": venv + install}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requirements", nargs="+", default=["jax"])
    parser.add_argument("--python", default="3.11")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="gpuenv-install-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    lockfile, pins = root / "bench.lock.yml", root / "requirements.txt"
    env = bench_env(root)
    flags = ["--os", "linux", "--python", args.python, "-o", str(lockfile)]
    lock_time = timed([*GPUENV, "lock", *args.requirements, *flags], env)
    count = write_pins(lockfile, pins)
    print(f"locked {' '.join(args.requirements)}: {count} wheels in {lock_time:.1f}s")
    bench = Bench(root, lockfile, pins, args.python)
    samples: dict[str, list[dict[str, float]]] = {}
    cases = {
        "gpuenv install": bench.gpuenv,
        "gpuenv install --no-smoke-test": lambda: bench.gpuenv("--no-smoke-test"),
        "uv venv + uv pip sync": bench.uv_sync,
        "python -m venv + pip install": bench.pip,
    }
    for case in cases.values():  # warm every cache once
        case()
    for _ in range(args.runs):
        for name, case in cases.items():
            samples.setdefault(name, []).append(case())
    med = {
        name: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for name, runs in samples.items()
    }
    uv = med["uv venv + uv pip sync"]["total"]
    print(f"\nmedian of {args.runs} runs, seconds, warm caches, fresh environment each run\n")
    print("| tool | create env | install | total | vs uv |")
    print("|---|---:|---:|---:|---:|")
    for name, m in med.items():
        create = f"{m['env']:.2f}" if "env" in m else "-"
        install = f"{m['install']:.2f}" if "install" in m else "-"
        print(f"| {name} | {create} | {install} | {m['total']:.2f} | {m['total'] / uv:.1f}x |")
    for name in ("gpuenv install", "gpuenv install --no-smoke-test"):
        print(f"| {name}, again (no-op) | - | - | {med[name]['no-op']:.2f} | - |")
    if args.keep is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
