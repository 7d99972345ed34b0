"""Lock one plan for three platforms, cold and warm, side by side with calling uv directly.

    .venv/bin/python benchmarks/lock_bench.py [--rounds 3] [--requirements jax tensorflow]

For each target, `gpuenv lock REQ... --os/--arch --python X.Y --no-probe` is timed against the
`uv pip compile` gpuenv runs underneath (the plan's pip requirements and companions, from
`gpuenv resolve --json`, with the same `--python-version`, `--python-platform`,
`--format pylock.toml` and `--exclude-newer`). Cold: fresh UV_CACHE_DIR and GPUENV_CACHE_DIR;
warm: the same caches again. The lock with the availability probe (no --no-probe) is timed too.

Both sides use only the default index: pip's configuration (which gpuenv would carry over to uv)
is switched off with PIP_CONFIG_FILE=/dev/null and the PIP_*/UV_* index variables are dropped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import GPUENV, clean_env, timed

from gpuenv.lock.pypi import find_uv
from gpuenv.lock.targets import uv_python_platform

TARGETS = {
    "linux-64": ["--os", "linux", "--arch", "x86_64"],
    "win-64": ["--os", "windows", "--arch", "x86_64"],
    "osx-arm64": ["--os", "macos", "--arch", "arm64"],
}


def base_env() -> dict[str, str]:
    return clean_env()


def caches(root: Path, name: str) -> dict[str, str]:
    return {"UV_CACHE_DIR": str(root / name / "uv"), "GPUENV_CACHE_DIR": str(root / name / "g")}


def uv_command(plan: dict[str, object], work: Path) -> list[str]:
    pip = plan["pip"]
    companions = plan["companions"]
    assert isinstance(pip, list) and isinstance(companions, list)
    if any(p["index"] for p in pip):
        sys.exit("this benchmark wants a plan that needs only the default index")
    requirements = [p["requirement"] for p in pip] + list(companions)
    (work / "requirements.in").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    cmd = [
        find_uv(),
        "pip",
        "compile",
        str(work / "requirements.in"),
        "--output-file",
        str(work / "pylock.toml"),
        "--format",
        "pylock.toml",
        "--python-version",
        str(plan["python"]),
        "--python-platform",
        uv_python_platform(str(plan["platform"]), plan.get("glibc")),  # type: ignore[arg-type]
        "--python",
        sys.executable,
        "--no-header",
        "--quiet",
    ]
    if plan.get("exclude_newer"):
        cmd += ["--exclude-newer", str(plan["exclude_newer"])]
    return cmd


def bench_target(
    target: str, requirements: list[str], python: str, rounds: int, root: Path
) -> dict[str, float]:
    env = base_env()
    flags = [*requirements, *TARGETS[target], "--python", python]
    work = root / target
    work.mkdir()
    resolved = subprocess.timed(
        [*GPUENV, "resolve", *flags, "--json"], env=env, capture_output=True, check=True
    )
    uv = uv_command(json.loads(resolved.stdout), work)
    lock = [*GPUENV, "lock", *flags, "-o", str(work / "gpuenv.lock.yml")]
    samples: dict[str, list[float]] = {}
    for r in range(rounds):
        for label, cmd in (("gpuenv", [*lock, "--no-probe"]), ("uv", uv), ("probe", lock)):
            env_r = {**env, **caches(root, f"{target}-{label}-{r}")}
            samples.setdefault(f"{label} cold", []).append(timed(cmd, env_r))
            samples.setdefault(f"{label} warm", []).append(timed(cmd, env_r))
    return {k: statistics.median(v) for k, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requirements", nargs="+", default=["jax", "tensorflow"])
    parser.add_argument("--python", default="3.11")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(
        f"gpuenv lock {' '.join(args.requirements)} --python {args.python}"
        f" (median of {args.rounds}, seconds)\n"
    )
    print(
        "| target | cache | gpuenv --no-probe | uv pip compile | overhead | fraction | with probe |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="gpuenv-lock-bench-") as tmp:
        for target in TARGETS:
            t = bench_target(target, args.requirements, args.python, args.rounds, Path(tmp))
            for cache in ("cold", "warm"):
                g, u, p = t[f"gpuenv {cache}"], t[f"uv {cache}"], t[f"probe {cache}"]
                print(
                    f"| {target} | {cache} | {g:.2f} | {u:.2f} | {g - u:+.2f} | {(g - u) / g:.0%}"
                    f" | {p:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
