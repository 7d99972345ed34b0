"""`gpuenv install` and `gpuenv setup` against the uv commands a user would run instead.

    .venv/bin/python benchmarks/install_bench.py [--quick] [--rounds N] [--index URL]
                                                 [--torch-wheel FILE]

Each gpuenv run and each baseline run builds a fresh environment with warm caches (uv's and
gpuenv's, filled by an untimed run of each first), alternating A and B:

- `gpuenv install LOCK --prefix DIR --no-smoke-test` against `uv venv DIR` + `uv pip sync
  --require-hashes` of the same pins (name==version --hash=sha256:...), from the same index;
- `gpuenv setup --lab LAB --name N` (the lab's lockfile exists: detect, read the plan, install,
  verify inside the environment) against `uv venv` + `uv pip install FRAMEWORK==VERSION` + the
  user's own import-and-multiply check (`python -c "import torch; a = torch.ones(32, 32); ..."`);
- `gpuenv setup` again with nothing changed (the no-op) against `python -c pass`.

Which framework: torch with `--torch-wheel FILE` (a CPU wheel; its dependencies from --index),
else jax (from --index, or stand-ins that pass gpuenv's jax probe; see _standins.py). Setup's
lab has one class, a Linux machine without a GPU: run it on a machine without an NVIDIA GPU.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional

import _common
from _common import GPUENV, PYTHON_PASS, Arm, Row, clean_env, output, paired, print_table, run
from _standins import PY, Stack, make_stack

from gpuenv.uv.binary import find_uv

LAB = """[lab]
name = "benchmark"
lockfiles = "locks"

[stack]
requirements = ["{framework}"]

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


class Bench:
    def __init__(self, work: Path, stack: Stack, python: str) -> None:
        self.work, self.stack, self.python = work, stack, python
        self.uv = find_uv()
        self.env = clean_env(
            PIP_INDEX_URL=stack.index,
            UV_CACHE_DIR=str(work / "uv-cache"),
            GPUENV_CACHE_DIR=str(work / "gpuenv-cache"),
            GPUENV_HOME=str(work / "gpuenv-home"),
        )
        if stack.framework_index:  # configured, as the baseline's --index: a lockfile's
            self.env["PIP_EXTRA_INDEX_URL"] = stack.framework_index  # origins must be
        self.counter = itertools.count()
        self.lab = work / "lab" / "lab.toml"
        self.lockfile = work / "lab" / "locks" / "cpu.lock.yml"
        self.pins = work / "pins.txt"

    # --- preparation (untimed) ---------------------------------------------------------------

    def lock(self) -> None:
        self.lockfile.parent.mkdir(parents=True)
        self.lab.write_text(LAB.format(framework=self.stack.framework))
        flags = ["--no-gpu", "--os", "linux", "--arch", "x86_64", "--python", self.python]
        out = ["-o", str(self.lockfile), "--exclude-newer", "none"]
        if self.stack.framework_index is None:
            run([*GPUENV, "lock", self.stack.framework, *flags, *out], self.env)
        else:  # the plan's torch comes from the stand-in of its index
            plan = json.loads(output([*GPUENV, "resolve", "torch", *flags, "--json"], self.env))
            plan["frameworks"]["torch"]["version"] = self.stack.version.split("+")[0]
            plan["pip"] = [
                {"requirement": f"torch=={self.stack.version}", "index": self.stack.framework_index}
            ]
            plan_file = self.work / "plan.json"
            plan_file.write_text(json.dumps(plan))
            run([*GPUENV, "lock", "--plan", str(plan_file), *out], self.env)
        from gpuenv.lock.load import load_locked

        locked = load_locked(self.lockfile)
        self.pins.write_text(
            "".join(f"{p.name}=={p.version} --hash=sha256:{p.sha256}\n" for p in locked.pip)
        )

    def fresh(self) -> Path:
        folder = self.work / "envs" / str(next(self.counter))
        folder.mkdir(parents=True)
        return folder / "env"

    def index_args(self) -> list[str]:
        args = ["--default-index", self.stack.index]
        if self.stack.framework_index:
            args += ["--index", self.stack.framework_index]
        return args

    # --- measured steps ----------------------------------------------------------------------

    def gpuenv_install(self) -> float:
        prefix = self.fresh()
        cmd = [
            *GPUENV,
            "install",
            str(self.lockfile),
            "--prefix",
            str(prefix),
            "--no-smoke-test",
            "-q",
        ]
        seconds = run(cmd, self.env)
        shutil.rmtree(prefix.parent)
        return seconds

    def uv_sync(self) -> float:
        env_dir = self.fresh()
        python = env_dir / "bin" / "python"
        seconds = run([self.uv, "venv", str(env_dir), "--python", self.python, "-q"], self.env)
        sync = [self.uv, "pip", "sync", "--python", str(python), "--require-hashes", "-q"]
        seconds += run([*sync, *self.index_args(), str(self.pins)], self.env)
        shutil.rmtree(env_dir.parent)
        return seconds

    def gpuenv_setup(self, name: Optional[str] = None, keep: bool = False) -> float:
        name = (name or f"bench{next(self.counter)}") + Arm.tag()  # each gpuenv its own state
        cmd = [*GPUENV, "setup", "--lab", str(self.lab), "--name", name, "-q"]
        seconds = run(cmd, self.env, cwd=self.lab.parent)
        if not keep:
            shutil.rmtree(self.work / "gpuenv-home" / "envs")
        return seconds

    def uv_setup(self) -> float:
        env_dir = self.fresh()
        python = env_dir / "bin" / "python"
        seconds = run([self.uv, "venv", str(env_dir), "--python", self.python, "-q"], self.env)
        install = [self.uv, "pip", "install", "--python", str(python), "-q", *self.index_args()]
        seconds += run([*install, f"{self.stack.framework}=={self.stack.version}"], self.env)
        seconds += run([str(python), "-c", self.stack.check], self.env)
        shutil.rmtree(env_dir.parent)
        return seconds


def rows(work: Path, stack: Stack, rounds: int, python: str = PY, noop: bool = True) -> list[Row]:
    """install, setup and (unless `noop` is False) the setup no-op, with `stack`."""
    bench = Bench(work, stack, python)
    bench.lock()
    for warm in (bench.gpuenv_install, bench.uv_sync, bench.gpuenv_setup, bench.uv_setup):
        warm()
    install = _install_row(bench, rounds)
    setup = paired(
        Row(
            f"setup, warm caches ({stack.framework} CPU)",
            "gpuenv setup --lab LAB --name N",
            f"`uv venv` + `uv pip install {stack.framework}` + import/matmul check",
            goal_ratio=1.1,
        ),
        bench.gpuenv_setup,
        bench.uv_setup,
        rounds,
    )
    if not noop:
        return [install, setup]
    bench.gpuenv_setup("noop", keep=True)
    if _common.BEFORE is not None:
        _common._before(lambda: bench.gpuenv_setup("noop", keep=True))
    noop = paired(
        Row(
            "setup no-op re-run",
            "gpuenv setup --lab LAB --name N",
            "`python -c pass`",
            goal_seconds=0.15,
        ),
        lambda: bench.gpuenv_setup("noop", keep=True),
        lambda: run(PYTHON_PASS, bench.env),
        rounds,
    )
    return [install, setup, noop]


def _install_row(bench: Bench, rounds: int) -> Row:
    return paired(
        Row(
            f"install --no-smoke-test ({bench.stack.framework} CPU)",
            "gpuenv install LOCK --prefix DIR --no-smoke-test",
            "`uv venv` + `uv pip sync`",
            goal_ratio=1.3,
        ),
        bench.gpuenv_install,
        bench.uv_sync,
        rounds,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 rounds, stand-in jax")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--index", help="install from this index (default: stand-ins built here)")
    parser.add_argument("--torch-wheel", type=Path, help="set up torch from this CPU wheel")
    args = parser.parse_args()
    if args.torch_wheel and not args.index:
        sys.exit("--torch-wheel needs --index (where torch's dependencies come from)")
    with tempfile.TemporaryDirectory(prefix="gpuenv-install-bench-") as tmp:
        work = Path(tmp)
        quick = args.quick
        stack = make_stack(
            work, None if quick else args.index, None if quick else args.torch_wheel, PY
        )
        print_table(rows(work, stack, 2 if quick else args.rounds))


if __name__ == "__main__":
    main()
