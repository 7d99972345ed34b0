"""A lab at scale: `gpuenv lock --lab` of 4, 8 and 16 machine classes, and N hosts installing one
class lockfile from one wheelhouse.

    .venv/bin/python benchmarks/lab_bench.py [--quick] [--rounds N]

Both read the local stand-in repositories the lab tests use (tests/support/installrepos.py: jax
and jaxlib 0.4.30/0.4.31, numpy, and a conda channel), served over HTTP by a server that counts
the bytes it sends: "upstream" is that server.

Lab lock. The lab's classes are Linux GPU classes of distinct compute capabilities (Maxwell to
Blackwell, driver 570.86.15), a CPU class and WSL2 classes; the first N of them (N = 4, 8, 16).
Baseline: what an admin without `--lab` runs, each class's lock as its own command (`gpuenv lock
--lab LAB --class C`, one per class). Reported: both times, their ratio, the growth from 4
classes (time(N) / time(4), against N / 4 for work growing linearly), and how many times uv ran
(classes whose pip part is one request share one run).

Fleet. N hosts (N = 1, 4, 8), each with its own uv cache and store, install one class lockfile
(jax CPU, pylock.toml). Baseline: every host installs from the index (`gpuenv install LOCK`).
gpuenv's fleet route: one `gpuenv fetch LOCK -d WHEELHOUSE` (the controller), then each host
`gpuenv install LOCK --offline --from WHEELHOUSE`. Reported: bytes sent by the index and time,
both routes.

Bytecode: as goals.py (gpuenv's own environment compiled first unless --quick).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from _common import GPUENV, REPO, clean_env, output, run

sys.path.insert(0, str(REPO / "tests" / "support"))
from installrepos import build_install_repos

# Distinct, non-overlapping classes, in the order the benchmark takes them (first 4, 8, 16).
CLASSES: tuple[tuple[str, str], ...] = (
    ("ampere", 'os = "linux"\ncompute_capability = "8.6"\ndriver = "570.86.15"'),
    ("pascal", 'os = "linux"\ncompute_capability = "6.1"\ndriver = "570.86.15"'),
    ("cpu", 'os = "linux"\ngpu = "none"'),
    ("hopper", 'os = "linux"\ncompute_capability = "9.0"\ndriver = "570.86.15"'),
    ("ada", 'os = "linux"\ncompute_capability = "8.9"\ndriver = "570.86.15"'),
    ("turing", 'os = "linux"\ncompute_capability = "7.5"\ndriver = "570.86.15"'),
    ("volta", 'os = "linux"\ncompute_capability = "7.0"\ndriver = "570.86.15"'),
    ("a100", 'os = "linux"\ncompute_capability = "8.0"\ndriver = "570.86.15"'),
    ("maxwell", 'os = "linux"\ncompute_capability = "5.2"\ndriver = "570.86.15"'),
    ("p100", 'os = "linux"\ncompute_capability = "6.0"\ndriver = "570.86.15"'),
    ("maxwell-1", 'os = "linux"\ncompute_capability = "5.0"\ndriver = "570.86.15"'),
    ("wsl-ampere", 'os = "wsl"\ncompute_capability = "8.6"\ndriver = "572.16"'),
    ("wsl-ada", 'os = "wsl"\ncompute_capability = "8.9"\ndriver = "572.16"'),
    ("wsl-turing", 'os = "wsl"\ncompute_capability = "7.5"\ndriver = "572.16"'),
    ("wsl-pascal", 'os = "wsl"\ncompute_capability = "6.1"\ndriver = "572.16"'),
    ("wsl-cpu", 'os = "wsl"\ngpu = "none"'),
)
SIZES = (4, 8, 16)
HOSTS = (1, 4, 8)


class _CountingHandler(http.server.SimpleHTTPRequestHandler):
    sent = 0
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
        data = source.read()
        with self.lock:
            type(self).sent += len(data)
        outputfile.write(data)


@contextlib.contextmanager
def counting_server(root: Path) -> Iterator[type[_CountingHandler]]:
    handler = type("Counter", (_CountingHandler,), {"sent": 0})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.port = server.server_address[1]  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def write_lab(folder: Path, n: int) -> Path:
    classes = "\n".join(f'[[class]]\nname = "{name}"\n{body}\n' for name, body in CLASSES[:n])
    path = folder / f"lab-{n}.toml"
    path.write_text(
        f'[lab]\nname = "{n} classes"\nlockfiles = "locks-{n}"\n\n'
        f'[stack]\nrequirements = ["jax<0.4.32"]\n\n{classes}'
    )
    return path


@dataclass
class LabRow:
    classes: int
    lab: list[float]
    separate: list[float]
    uv_runs: int
    uv_runs_separate: int


def _uv_runs(stderr: str) -> int:
    return sum(1 for line in stderr.splitlines() if " pip compile " in line)


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    import subprocess

    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return elapsed, done.stderr


def _lock_together(lab: Path, env: dict[str, str], row: LabRow) -> None:
    elapsed, stderr = _timed([*GPUENV, "-v", "lock", "--lab", str(lab)], env)
    row.lab.append(elapsed)
    row.uv_runs = _uv_runs(stderr)


def _lock_one_by_one(lab: Path, names: list[str], env: dict[str, str], row: LabRow) -> None:
    total, runs = 0.0, 0
    for name in names:
        elapsed, stderr = _timed([*GPUENV, "-v", "lock", "--lab", str(lab), "--class", name], env)
        total, runs = total + elapsed, runs + _uv_runs(stderr)
    row.separate.append(total)
    row.uv_runs_separate = runs


def lab_rows(work: Path, env: dict[str, str], rounds: int) -> list[LabRow]:
    rows = []
    for n in SIZES:
        lab = write_lab(work, n)
        names = [name for name, _ in CLASSES[:n]]
        row = LabRow(n, [], [], 0, 0)
        _timed([*GPUENV, "lock", "--lab", str(lab)], env)  # warm: uv's cache, the probe cache
        for r in range(rounds):
            if r % 2 == 0:
                _lock_together(lab, env, row)
                _lock_one_by_one(lab, names, env, row)
            else:
                _lock_one_by_one(lab, names, env, row)
                _lock_together(lab, env, row)
            print(f"  lock --lab, {n} classes: round {r + 1}/{rounds}", file=sys.stderr)
        rows.append(row)
    return rows


@dataclass
class FleetRow:
    hosts: int
    each_bytes: int
    each_seconds: float
    wheelhouse_bytes: int
    wheelhouse_seconds: float


def _host(env: dict[str, str], home: Path) -> dict[str, str]:
    """One host of the fleet: its own store and caches (nothing shared with the others)."""
    return {
        **env,
        "GPUENV_HOME": str(home / "gpuenv"),
        "GPUENV_CACHE_DIR": str(home / "cache"),
        "UV_CACHE_DIR": str(home / "uv-cache"),
    }


def fleet_rows(work: Path, repos_root: Path, env: dict[str, str]) -> list[FleetRow]:
    rows = []
    with counting_server(repos_root) as counter:
        index = f"http://127.0.0.1:{counter.port}/index/simple/"  # type: ignore[attr-defined]
        lock = work / "pylock.fleet.toml"
        base = {**env, "PIP_INDEX_URL": index}
        output(
            [
                *GPUENV,
                "lock",
                "jax<0.4.32",
                "--no-gpu",
                "--os",
                "linux",
                "--arch",
                "x86_64",
                "--format",
                "pylock",
                "--exclude-newer",
                "none",
                "-o",
                str(lock),
            ],
            base,
        )
        for n in HOSTS:
            fleet = work / f"fleet-{n}"
            counter.sent = 0
            start = time.perf_counter()
            for i in range(n):
                run(
                    [*GPUENV, "install", str(lock), "--name", "lab", "--no-smoke-test"],
                    _host(base, fleet / "each" / f"host-{i}"),
                )
            each_seconds, each_bytes = time.perf_counter() - start, counter.sent

            counter.sent = 0
            start = time.perf_counter()
            wheelhouse = fleet / "wheelhouse"
            controller = {
                **base,
                "UV_CACHE_DIR": str(fleet / "controller-uv-cache"),
                "GPUENV_CACHE_DIR": str(fleet / "controller-cache"),
            }
            run([*GPUENV, "fetch", str(lock), "-d", str(wheelhouse)], controller)
            for i in range(n):
                run(
                    [
                        *GPUENV,
                        "install",
                        str(lock),
                        "--name",
                        "lab",
                        "--no-smoke-test",
                        "--offline",
                        "--from",
                        str(wheelhouse),
                    ],
                    _host(base, fleet / "wheelhouse" / f"host-{i}"),
                )
            rows.append(
                FleetRow(n, each_bytes, each_seconds, counter.sent, time.perf_counter() - start)
            )
            print(f"  fleet, {n} hosts: done", file=sys.stderr)
    return rows


def render(labs: list[LabRow], fleets: list[FleetRow]) -> str:
    first = statistics.median(labs[0].lab)
    lines = [
        "| classes | `lock --lab`: median (min-max) | one `lock --class` per class: median"
        " (min-max) | ratio | growth from 4 classes (linear: N/4) | uv runs: `--lab`, one"
        " by one |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in labs:
        med, sep = statistics.median(row.lab), statistics.median(row.separate)
        lines.append(
            f"| {row.classes} | {med:.2f} s ({min(row.lab):.2f}-{max(row.lab):.2f}) |"
            f" {sep:.2f} s ({min(row.separate):.2f}-{max(row.separate):.2f}) |"
            f" {med / sep:.2f}x | {med / first:.2f}x ({row.classes / labs[0].classes:g}x) |"
            f" {row.uv_runs}, {row.uv_runs_separate} |"
        )
    lines += [
        "",
        "| hosts | each from the index: bytes, time | one fetch, then offline from the"
        " wheelhouse: bytes, time | bytes ratio |",
        "|---:|---:|---:|---:|",
    ]
    for f in fleets:
        lines.append(
            f"| {f.hosts} | {f.each_bytes:,} B, {f.each_seconds:.2f} s |"
            f" {f.wheelhouse_bytes:,} B, {f.wheelhouse_seconds:.2f} s |"
            f" {f.wheelhouse_bytes / f.each_bytes:.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1 round, 4 classes, 1-2 hosts")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    global SIZES, HOSTS
    if args.quick:
        SIZES, HOSTS = (4,), (1, 2)
    with tempfile.TemporaryDirectory(prefix="gpuenv-lab-bench-") as tmp:
        work = Path(tmp)
        repos = build_install_repos(work / "repos")
        env = clean_env(
            PIP_INDEX_URL=repos.index,
            UV_CACHE_DIR=str(work / "uv-cache"),
            GPUENV_CACHE_DIR=str(work / "gpuenv-cache"),
            GPUENV_HOME=str(work / "home"),
        )
        labs = lab_rows(work, env, 1 if args.quick else args.rounds)
        fleets = fleet_rows(work, Path(urlsplit(repos.index).path).parents[1], env)
    print(render(labs, fleets))


if __name__ == "__main__":
    main()
