"""The one-screen summary of a check: what the machine is, what agreed, what to look at."""

from __future__ import annotations

import textwrap
from typing import Any, Optional

from gpuenv.gpucheck.compare import AGREE, DIFFER
from gpuenv.gpucheck.run import Result

WIDTH = 100
MAX_LINES = 8  # per list, so the whole summary fits one screen


def _clip(text: str) -> str:
    return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."


def _wrapped(head: str, text: str, most: int = 3) -> list[str]:
    """A line that matters whole (what differs), on up to `most` lines."""
    parts = textwrap.wrap(text, WIDTH - len(head)) or [""]
    if len(parts) > most:
        parts = [*parts[: most - 1], " ".join(parts[most - 1 :])]
    return [head + parts[0]] + [" " * len(head) + p for p in parts[1:]]


def _plan_line(fw: str, plan: Optional[dict[str, Any]]) -> str:
    if plan is None:
        return f"{fw}: no plan"
    choice = (plan.get("frameworks") or {}).get(fw) or {}
    cuda = f", CUDA {choice.get('cuda')}" if choice.get("cuda") and choice.get("gpu") else ""
    cudnn = f", cuDNN {choice.get('cudnn')}" if choice.get("cudnn") and choice.get("gpu") else ""
    return (
        f"{fw} {choice.get('version')} ({choice.get('variant')}{cuda}{cudnn}), "
        f"Python {plan.get('python')}, {plan.get('accelerator')}"
    )


def _verify_line(path: str, report: Optional[dict[str, Any]]) -> str:
    if report is None:
        return f"{path}: no report"
    parts = []
    for name, fw in (report.get("frameworks") or {}).items():
        state = "ok" if fw.get("ok") else "FAILED"
        where = f" on {fw.get('device')}" if fw.get("device") else ""
        parts.append(f"{name} {fw.get('version') or '?'} {state}{where}")
    return f"{path} ({report.get('python_version')}): {'; '.join(parts) or 'nothing probed'}"


def render(result: Result) -> str:
    m = result.machine or {}
    lines = [f"gpuenv GPU check, {result.started}, {result.seconds:.1f} s, output in {result.out}"]
    osi = m.get("os") or {}
    lines.append(f"Machine:  {osi.get('name', '?')}, {m.get('arch', '?')}, glibc {m.get('glibc')}")
    if not result.has_gpu:
        lines.append("GPU:      none: no NVIDIA GPU or driver on this machine, nothing recorded")
        lines += [f"          ({n})" for n in result.recording.notes[:4]]
    else:
        drv = m.get("driver") or {}
        lines.append(f"Driver:   {drv.get('version')}, CUDA {drv.get('cuda')}")
        for g in (m.get("gpus") or [])[:4]:
            lines.append(
                f"GPU {g.get('index')}:    {g.get('name')} ({g.get('pci_id')}), compute capability"
                f" {g.get('compute_capability')}, {g.get('memory_mib')} MiB"
            )
        agree = [f.topic for f in result.findings if f.status == AGREE]
        differ = [f for f in result.findings if f.status == DIFFER]
        unknown = [f for f in result.findings if f.status not in (AGREE, DIFFER)]
        lines.append(f"Agree:    {len(agree)} of {len(result.findings)} facts (all in report.json)")
        for f in differ[:MAX_LINES]:
            lines += _wrapped("DIFFER:   ", f.line())
        lines += [f"Unknown:  {f.line()}" for f in unknown[:3]]
    for fw, plan in result.plans.items():
        lines.append(f"Resolve:  {_plan_line(fw, plan)}")
    for interp, report in result.verified:
        lines.append(f"Verify:   {_verify_line(interp.path, report)}")
    for note in result.notes[:3]:
        lines.append(f"Note:     {note}")
    slow = [s for s in result.steps if s.returncode != 0]
    for s in slow[:3]:
        lines.append(f"Step:     {s.name}: {s.error or f'exit status {s.returncode}'}")
    if result.problems:
        lines.append(
            f"Result:   {len(result.problems)} thing(s) to look at (exit 1); see report.json"
        )
    elif result.has_gpu:
        lines.append("Result:   every source agreed and every step worked (exit 0)")
    else:
        lines.append("Result:   no GPU here; detect, resolve and verify ran without one (exit 0)")
    if result.has_gpu:
        lines.append(
            f"Next:     python -m gpuenv.gpucheck promote {result.out} NAME"
            "  (copies the recording into tests/fixtures/detect/NAME)"
        )
    return "\n".join(_clip(line) for line in lines) + "\n"
