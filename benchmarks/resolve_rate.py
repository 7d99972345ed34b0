"""Resolve every GPU of the knowledge base on every OS for each framework set; report the rate.

    .venv/bin/python benchmarks/resolve_rate.py [--limit N] [--quick]

Then times `gpuenv resolve` (and detect) end to end, interpreter start-up included, against
`python -c pass` (cli_bench.py), since a resolve must cost a small multiple of the interpreter's
own start-up.
"""

from __future__ import annotations

import argparse
import time

import cli_bench
from _common import print_table

from gpuenv.machine import Driver, Gpu, Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import load_knowledge_base
from gpuenv.resolve import ResolveError, resolve

FRAMEWORK_SETS = (
    ("torch",),
    ("tensorflow",),
    ("jax",),
    ("torch", "tensorflow"),
    ("torch", "tensorflow", "jax"),
)
OSES = ("linux", "windows", "wsl")


def machines(limit: int | None) -> list[Machine]:
    kb = load_knowledge_base()
    out = []
    gpus = kb.gpus[:limit] if limit else kb.gpus
    for record in gpus:
        for os_name in OSES:
            base = describe_machine(kb, gpu=None, driver=None, os_name=os_name, arch="x86_64")
            gpu = Gpu(
                record.name,
                record.compute_capability,
                pci_id=f"10de:{record.pci_ids[0]}" if record.pci_ids else None,
            )
            driver = "580.95.05" if os_name == "linux" else "581.57"
            out.append(
                Machine(
                    os=OSInfo(base.os.family, base.os.name, wsl=base.os.wsl),
                    arch="x86_64",
                    platform=base.platform,
                    driver=Driver(driver),
                    gpus=(gpu,),
                )
            )
    return out


def time_in_process(limit: int | None) -> None:
    kb = load_knowledge_base()
    ms = machines(limit)
    for frameworks in FRAMEWORK_SETS:
        start = time.perf_counter()
        failures = gpu = 0
        for m in ms:
            try:
                plan = resolve(m, frameworks, kb=kb)
            except ResolveError:
                failures += 1
            else:
                gpu += plan.accelerator == "cuda"
        elapsed = time.perf_counter() - start
        print(
            f"{'+'.join(frameworks):<24} {len(ms):>5} machines  {len(ms) / elapsed:8.0f} resolves/s"
            f"  ({elapsed * 1000 / len(ms):.2f} ms each, {gpu} on the GPU, {failures} infeasible)",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, help="only the first N GPUs")
    parser.add_argument("--quick", action="store_true", help="3 GPUs, 2 rounds: does it run?")
    args = parser.parse_args()
    time_in_process(3 if args.quick else args.limit)
    print()
    print_table(cli_bench.rows(2 if args.quick else 20))
