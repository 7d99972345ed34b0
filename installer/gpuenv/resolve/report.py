"""A Plan for people: the stack, why, and what to do when the GPU can't be used."""

from __future__ import annotations

from gpuenv.resolve.plan import Plan


def render(plan: Plan, *, explain: bool = False) -> str:
    lines = [
        f"Python       {plan.python}",
        f"Platform     {plan.platform}",
        f"Accelerator  {plan.accelerator}" + _gpu_suffix(plan),
    ]
    for name, fw in plan.frameworks.items():
        libs = []
        if fw.cuda:
            libs.append(f"CUDA {fw.cuda}")
        if fw.cudnn:
            libs.append(f"cuDNN {fw.cudnn}")
        if not libs and not fw.gpu and fw.variant != "cpu":
            detail = " (a CUDA build, running on the CPU)"
        elif not libs:
            detail = " (CPU build)"
        elif fw.gpu:
            detail = f" ({', '.join(libs)})"
        else:
            detail = f" ({', '.join(libs)} build, running on the CPU)"
        lines.append(f"{name:<12} {fw.version} [{fw.variant}]{detail}")
    lines.append("")
    lines.append("Install:")
    for req in plan.pip:
        index = f"   (index: {req.index})" if req.index else ""
        lines.append(f"  pip   {req.requirement}{index}")
    for spec in plan.conda:
        lines.append(f"  conda {spec}   (conda-forge)")
    for pin in plan.companions:
        lines.append(f"  pin   {pin}")
    for cap in plan.constraints:
        lines.append(f"  cap   {cap}   (if pulled in)")
    lines.append("")
    lines.append("Why:")
    lines += [f"  - {r}" for r in plan.reasons]
    if plan.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines += [f"  ! {w}" for w in plan.warnings]
    if plan.fixes:
        lines.append("")
        lines.append("To get more out of this GPU:")
        lines += [f"  > {f}" for f in plan.fixes]
    if explain:
        lines += _explain(plan)
    return "\n".join(lines)


def _explain(plan: Plan) -> list[str]:
    """Rejections with the knowledge-base row each rests on: sources are numbered once and
    cited as [n]; a caveat says when the row is unverified or its builds incomplete."""
    lines = ["", "Sources of the choice:"]
    lines += [f"  = {s}" for s in plan.sources]
    lines += ["", "Rejected candidates (newest first):"]
    # One line per distinct rejection (a variant recorded per platform is rejected once per row).
    shown = list(dict.fromkeys(r for r in plan.rejected if r.rule != "requirement"))
    skipped = sum(1 for r in plan.rejected if r.rule == "requirement")
    numbers: dict[str, int] = {}
    for r in shown:
        cited = ""
        if r.source:
            n = numbers.setdefault(r.source, len(numbers) + 1)
            cited = f" [{n}]"
        lines.append(f"  x {r.candidate:<32} {r.rule:<11} {r.message}{cited}")
        if r.caveat:
            lines.append(f"      ({r.caveat})")
    if skipped:
        lines.append(f"  ({skipped} more outside the requested version ranges)")
    if numbers:
        lines += ["", "Sources of the rejections:"]
        lines += [f"  [{n}] {source}" for source, n in numbers.items()]
    return lines


def _gpu_suffix(plan: Plan) -> str:
    if plan.accelerator != "cuda" or not plan.gpu:
        return ""
    return f" on {plan.gpu['name']} (sm_{str(plan.gpu['compute_capability']).replace('.', '')})"
