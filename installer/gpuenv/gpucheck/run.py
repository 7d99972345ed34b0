"""The check, in order: record, detect, compare, resolve, verify; then the report and summary.

Every step has its own time limit inside one overall budget, and nothing a step does wrong
stops the steps after it: a short visit to a GPU machine should bring back all it can.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpuenv import __version__
from gpuenv.fs.safe_paths import is_regular_file
from gpuenv.gpucheck import compare, record, steps
from gpuenv.gpucheck.compare import Finding
from gpuenv.gpucheck.steps import Budget, Interpreter, Step

DEFAULT_BUDGET = 240.0  # seconds for the whole check: "well within 5 minutes"
FIXTURE = "fixture"  # $OUT/fixture: the recording, in the layout `promote` copies
MACHINE_JSON = "machine.json"  # `gpuenv detect --json` (all probes)
MACHINE_SMI_JSON = "machine.nvml-off.json"  # the same with NVML disabled: the nvidia-smi path
PROBE_TIMEOUT = 90.0  # seconds per framework probe in verify (CUDA start-up of a big card)
OWNED = (FIXTURE, "plans", "verify")
OWNED_FILES = (
    MACHINE_JSON,
    "report.json",
    "summary.txt",
    "gpu-check.tar.gz",
)  # folders the check empties before it writes


class CheckError(Exception):
    """The check cannot run at all (its output folder is unusable)."""


@dataclass
class Result:
    out: Path
    has_gpu: bool
    recording: record.Recording
    steps: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    plans: dict[str, Optional[dict[str, Any]]] = field(default_factory=dict)
    verified: list[tuple[Interpreter, Optional[dict[str, Any]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    started: str = ""
    machine: Optional[dict[str, Any]] = None

    @property
    def exit_status(self) -> int:
        return 1 if self.problems else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu_check": 1,
            "gpuenv": __version__,
            "started": self.started,
            "seconds": self.seconds,
            "has_gpu": self.has_gpu,
            "python": sys.version.split()[0],
            "recording": self.recording.metadata(),
            "recorded_files": sorted(self.recording.files),
            "machine": self.machine,
            "findings": [f.to_json() for f in self.findings],
            "plans": self.plans,
            "verify": [
                {"python": i.path, "frameworks": list(i.frameworks), "report": rep}
                for i, rep in self.verified
            ],
            "steps": [s.to_json() for s in self.steps],
            "notes": self.notes,
            "problems": self.problems,
            "exit_status": self.exit_status,
        }


def prepare_out(out: Path) -> None:
    """A fresh output folder; the check's own sub-folders are emptied, nothing else is touched."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise CheckError(f"{out} is not a folder; pass --out with a folder to write into")
    out.mkdir(parents=True, exist_ok=True)
    for name in OWNED:
        sub = out / name
        if sub.is_symlink() or (sub.exists() and not sub.is_dir()):
            raise CheckError(f"{sub} is not a folder the check made; move it away")
        if sub.is_dir():
            shutil.rmtree(sub)
    for name in OWNED_FILES:
        stale = out / name
        if stale.is_dir() and not stale.is_symlink():
            raise CheckError(f"{stale} is a folder; move it away")
        if stale.is_symlink() or stale.exists():
            stale.unlink()  # a link is removed, never followed


def _kb_functions() -> tuple[
    Optional[compare.KbGpu], Optional[compare.KbGpu], Optional[compare.KbCuda], Optional[str]
]:
    """The knowledge base as compare needs it; (None, None, None, why) when it cannot load."""
    try:
        from gpuenv.doctor.driver import max_cuda
        from gpuenv.machine import Driver, Machine, OSInfo
        from gpuenv.recipes import load_knowledge_base

        kb = load_knowledge_base()
    except Exception as exc:  # the check must still report what the machine said
        return None, None, None, f"knowledge base did not load: {exc}"

    def by_pci(pci: str) -> Optional[compare.KbRow]:
        hit = kb.find_gpu(pci_id=pci)
        return compare.KbRow(hit.compute_capability, hit.name, hit.architecture) if hit else None

    def by_name(name: str) -> Optional[compare.KbRow]:
        try:
            hit = kb.find_gpu(name=name)
        except LookupError as exc:  # AmbiguousGpu
            return compare.KbRow(f"ambiguous ({exc})", name)
        return compare.KbRow(hit.compute_capability, hit.name, hit.architecture) if hit else None

    def cuda_of(driver: str) -> Optional[str]:
        machine = Machine(
            os=OSInfo("linux"), arch="x86_64", platform="linux-64", driver=Driver(driver)
        )
        return max_cuda(kb, machine).version

    return by_pci, by_name, cuda_of, None


def _json_or_none(text: str) -> Optional[dict[str, Any]]:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _save(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")


def detect_steps(
    result: Result, where: Path, budget: Budget, env: dict[str, str]
) -> dict[str, Optional[str]]:
    """`gpuenv detect --json` as users run it, and again with NVML off (the nvidia-smi path)."""
    machines: dict[str, Optional[str]] = {}
    runs = [("gpuenv detect", MACHINE_JSON, env)]
    if result.has_gpu:
        runs.append(
            ("gpuenv detect, NVML off", MACHINE_SMI_JSON, {**env, "GPUENV_DISABLE_NVML": "1"})
        )
    for label, fname, step_env in runs:
        step = steps.run_step(
            label, steps.gpuenv("detect", "--json", "--timeout", "15"), budget, 60, step_env
        )
        result.steps.append(step)
        machines[label] = step.stdout if step.ok else None
        if step.ok:
            _save(where / fname, step.stdout)
        else:
            result.problems.append(f"{label} failed: {step.error or step.stderr.strip()[-200:]}")
    return machines


def resolve_steps(
    result: Result, machine_file: Optional[Path], budget: Budget, env: dict[str, str]
) -> None:
    for fw in steps.FRAMEWORKS:
        args = ["resolve", fw, "--json"]
        if machine_file is not None:
            args += ["--machine", str(machine_file)]
        step = steps.run_step(f"gpuenv resolve {fw}", steps.gpuenv(*args), budget, 60, env)
        result.steps.append(step)
        plan = _json_or_none(step.stdout) if step.ok else None
        result.plans[fw] = plan
        if plan is not None:
            _save(result.out / "plans" / f"{fw}.json", step.stdout)
        elif step.returncode == 3:
            result.notes.append(f"resolve {fw}: no stack fits: {step.stderr.strip()[-200:]}")
        else:
            result.problems.append(
                f"gpuenv resolve {fw} failed: {step.error or step.stderr.strip()[-200:]}"
            )


def expectations_for(
    interp: Interpreter, machine: Optional[dict[str, Any]], gpu: bool
) -> dict[str, Any]:
    """Any version, on the GPU when there is one: what a working install on this machine does."""
    gpus = (machine or {}).get("gpus") or []
    first = gpus[0] if gpus else {}
    return {
        "expectations": 1,
        "accelerator": "cuda" if gpu else "cpu",
        "frameworks": {n: {"gpu": gpu} for n in interp.frameworks},
        "gpu_cc": first.get("compute_capability") if gpu else None,
        "gpu_name": first.get("name") if gpu else None,
        "python": None,
        "source": "gpu-check",
    }


def verify_steps(
    result: Result, candidates: Sequence[str], budget: Budget, env: dict[str, str]
) -> None:
    interps, notes = steps.find_framework_pythons(candidates, budget, env)
    result.notes += notes
    if not interps:
        result.notes.append("no interpreter here has torch, tensorflow or jax: verify not run")
    gpu = result.has_gpu and bool((result.machine or {}).get("gpus"))
    for n, interp in enumerate(interps[:3]):
        expect = result.out / "verify" / f"expect-{n}.json"
        _save(expect, json.dumps(expectations_for(interp, result.machine, gpu), indent=2))
        # each probe stops (and says so in the report) before the step as a whole is cut off
        per_probe = max(10, min(PROBE_TIMEOUT, (budget.left() - 20) / len(interp.frameworks)))
        timeout = per_probe * len(interp.frameworks) + 20
        argv = steps.gpuenv(
            "verify",
            "--python",
            interp.path,
            "--expect-json",
            str(expect),
            "--json",
            "--timeout",
            str(int(per_probe)),
        )
        step = steps.run_step(f"gpuenv verify {interp.path}", argv, budget, timeout, env)
        result.steps.append(step)
        report = _json_or_none(step.stdout)
        result.verified.append((interp, report))
        if report is not None:
            _save(result.out / "verify" / f"report-{n}.json", step.stdout)
        if report is None or step.returncode not in (0,):
            why = step.error or step.stderr.strip()[-300:] or f"exit status {step.returncode}"
            result.problems.append(f"gpuenv verify --python {interp.path}: {why}")


def source_text(result: Result) -> str:
    """A draft SOURCE for the fixture folder; `promote` lets the maintainer add the machine."""
    m = result.machine or {}
    drv = m.get("driver") or {}
    gpus = ", ".join(
        f"{g.get('name')} ({g.get('pci_id')}, cc {g.get('compute_capability')})"
        for g in m.get("gpus") or []
    )
    osn = (m.get("os") or {}).get("name", "")
    lines = [
        f"real: recorded by scripts/gpu-check.sh (gpuenv {__version__}) on {result.started}",
        f"machine: {osn}, {m.get('arch', '')}; GPUs: {gpus or 'none'}",
        f"driver: {drv.get('version')} (CUDA {drv.get('cuda')})",
        "",
        f"{record.NVML_JSON:<28}the NVML child's report (gpuenv.detect.nvml.CHILD_CODE), as printed",
        f"{record.NVML_EXTRA_JSON:<28}more NVML answers (architecture, brand, bus id, multiprocessors, MIG)",
        f"{record.SMI_QUERY:<28}nvidia-smi {' '.join(steps_query(result))}",
        f"{record.SMI_Q:<28}nvidia-smi -q -d COMPUTE (serials and UUIDs replaced by {record.REDACTED})",
        f"{record.SMI_XML:<28}nvidia-smi -q -x (serials and UUIDs replaced by {record.REDACTED})",
        f"{record.PROC_VERSION:<28}/proc/driver/nvidia/version",
        f"{record.LINUX_JSON:<28}NVIDIA display devices in /sys/bus/pci and /proc/driver/nvidia/gpus/*/information",
        f"{MACHINE_JSON:<28}gpuenv detect --json on the machine (what gpuenv concluded then)",
        f"{MACHINE_SMI_JSON:<28}the same with GPUENV_DISABLE_NVML=1",
        f"{record.RECORDING_JSON:<28}how each file was made: argv, exit status, query fields",
    ]
    return "\n".join(lines) + "\n"


def steps_query(result: Result) -> list[str]:
    from gpuenv.detect import nvidia_smi

    return nvidia_smi.query_args(result.recording.query_fields)


def candidate_pythons(machine: Optional[dict[str, Any]], extra: Sequence[str]) -> list[str]:
    out = list(extra)
    out += [str(p.get("path")) for p in (machine or {}).get("pythons") or [] if p.get("path")]
    for name in ("python3", "python"):
        found = shutil.which(name)
        if found:
            out.append(found)
    out.append(sys.executable)
    seen: list[str] = []
    for p in out:
        if p not in seen:
            seen.append(p)
    return seen


def archive(out: Path) -> Path:
    """Everything under `out` in one file (for channels that bring back only a few files)."""
    target = out / "gpu-check.tar.gz"
    with tarfile.open(target, "w:gz") as tar:
        for path in sorted(out.rglob("*")):
            if is_regular_file(path) and path != target:
                tar.add(path, arcname=str(path.relative_to(out)))
    for name in OWNED:
        if (out / name).is_dir():
            shutil.rmtree(out / name)
    return target


def run_check(
    out: Path,
    *,
    budget_s: float = DEFAULT_BUDGET,
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
    pythons: Sequence[str] = (),
    discover: bool = True,
) -> Result:
    """The whole check into `out`. `pythons` are verified too; with discover=False, only they
    (tests on a GPU machine must not pick up its real frameworks)."""
    start = time.monotonic()
    budget = Budget(budget_s)
    prepare_out(out)
    env = dict(os.environ if environ is None else environ)
    env.pop("GPUENV_DISABLE_NVML", None)
    cache = tempfile.mkdtemp(prefix="gpuenv-gpu-check-")
    env.setdefault("GPUENV_CACHE_DIR", cache)
    try:
        rec = record.record_all(timeout=budget.limit(10), root=root, environ=env)
        result = Result(out=out, has_gpu=rec.anything, recording=rec)
        result.started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        fixture = out / FIXTURE
        if rec.anything:
            rec.write(fixture)
        machines = detect_steps(result, fixture if rec.anything else out, budget, env)
        result.machine = _json_or_none(machines.get("gpuenv detect") or "")
        if result.has_gpu:
            by_pci, by_name, cuda_of, why = _kb_functions()
            if why:
                result.problems.append(why)
            views = compare.views_of(rec.files, rec.query_fields, machines)
            archs = compare.nvml_architectures(rec.files)
            result.findings = compare.compare(views, by_pci, by_name, cuda_of, archs)
            result.problems += [f.line() for f in result.findings if f.problem]
            result.notes += [f"{v.source}: {v.error}" for v in views if v.error]
            if result.machine is not None and not result.machine.get("gpus"):
                result.problems.append("the driver is there but gpuenv detect found no GPU")
            _save(fixture / "SOURCE", source_text(result))
        machine_file = (fixture if rec.anything else out) / MACHINE_JSON
        resolve_steps(result, machine_file if machine_file.is_file() else None, budget, env)
        candidates = candidate_pythons(result.machine, pythons) if discover else list(pythons)
        verify_steps(result, candidates, budget, env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    result.seconds = round(time.monotonic() - start, 1)
    return result
