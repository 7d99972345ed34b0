"""Judge one probe's facts against what the plan promised. Pure: no processes, no I/O."""

from __future__ import annotations

import re
from typing import Optional

from gpuenv.verify.arch import same_release
from gpuenv.verify.expectations import Expectations, ExpectedFramework
from gpuenv.verify.frameworks import JUDGES
from gpuenv.verify.report import FrameworkReport
from gpuenv.verify.runner import ProbeRun
from gpuenv.verify.verdict import REINSTALL, Verdict


def _start(name: str, expectations: Expectations, run: ProbeRun) -> Verdict:
    expected = expectations.frameworks.get(name, ExpectedFramework())
    return Verdict(
        name, expected, expectations.wants_gpu(name), expectations, dict(run.facts or {}), run
    )


def _runnable(v: Verdict) -> bool:
    """False (with the problem recorded) when the probe gave no facts or the import failed."""
    run, name = v.run, v.name
    if run.launch_error:
        v.problem(f"the interpreter could not be started: {run.launch_error}", REINSTALL)
        return False
    if run.timed_out:
        where = f" (stuck at: {run.last_stage})" if run.last_stage else ""
        v.problem(
            f"the {name} probe did not finish within {run.seconds:.0f}s{where}",
            f'run `python -c "import {name}"` in the environment to see where it hangs; a hang '
            "while the GPU is initialised usually means a broken driver (check `nvidia-smi`)",
        )
        return False
    if run.facts is None:
        tail = "; ".join(run.stderr_tail[-3:]) or "no output"
        where = f" at: {run.last_stage}" if run.last_stage else ""
        v.problem(
            f"the {name} probe crashed (exit status {run.returncode}){where}: {tail}", REINSTALL
        )
        return False
    if v.facts.get("probe_error"):
        v.problem(f"the {name} probe failed: {v.facts['probe_error']}")
    if not v.facts.get("import_ok"):
        error = str(v.facts.get("import_error") or "unknown error")
        if f"No module named '{name}'" in error:
            v.problem(f"{name} is not installed in this environment ({error})", REINSTALL)
        else:
            v.problem(f"`import {name}` fails: {error}", REINSTALL)
        v.check("import", False, error)
        return False
    v.check("import", True)
    v.version = v.facts.get("version")
    return True


def _version(v: Verdict) -> None:
    want = v.expected.version
    if want is None or v.version is None:
        return
    ok = same_release(v.version, want)
    v.check("version", ok, f"{v.version}, plan: {want}")
    if not ok:
        v.problem(f"{v.name} {v.version} is installed, the plan chose {want}", REINSTALL)


def _ops(v: Verdict) -> bool:
    """Every op that ran must be right; True when one ran right on a GPU."""
    on_gpu = False
    for op in v.facts.get("ops") or []:
        label = f"{op.get('name')} on {op.get('device')}"
        if op.get("error"):
            v.check(label, False, str(op["error"]))
            v.problem(f"{label} failed: {op['error']}")
        elif not op.get("ok"):
            v.check(label, False, f"wrong result, max error {op.get('max_abs_err')}")
            v.problem(
                f"{label} gave a wrong result (max error {op.get('max_abs_err')} against "
                "the reference)"
            )
        else:
            placed = op.get("placed_on")
            v.check(label, True, f"placed on {placed}" if placed else "")
            device = str(op.get("device") or "").lower()
            if "cpu" not in device:
                on_gpu = True
                v.device = v.device or str(op.get("device"))
    if v.device is None:
        v.device = "cpu"
    return on_gpu


def gpu_not_expected(v: Verdict, gpu_used: bool) -> None:
    if not v.wants_gpu and not gpu_used:
        why = (
            "the plan chose the CPU"
            if v.expectations.source == "plan"
            else "no plan was given, so the CPU is what must work"
        )
        v.notes.append(
            f"a GPU was not expected ({why}); the CPU path works"
            if all(c.ok for c in v.checks)
            else f"a GPU was not expected ({why})"
        )


def _loaded_from_outside(v: Verdict) -> None:
    """A CUDA library the process really loaded from outside the environment is a problem:
    another copy shadowed the environment's (LD_LIBRARY_PATH, most often)."""
    from gpuenv.recipes.cuda_sonames import cuda_soname

    prefix = str(v.facts.get("prefix") or "")
    loaded = [str(p) for p in v.facts.get("loaded_libraries") or []]
    cuda = [p for p in loaded if cuda_soname(p.rsplit("/", 1)[-1])]
    if not prefix or not cuda:
        return
    outside = [p for p in cuda if not p.startswith(prefix.rstrip("/") + "/")]
    detail = f"{len(cuda) - len(outside)} of {len(cuda)} from {prefix}"
    if not v.check("CUDA libraries loaded", not outside, detail):
        for path in outside:
            v.problem(
                f"{path} was loaded from outside the environment ({prefix}), shadowing the"
                " environment's own copy",
                f"remove {path.rsplit('/', 1)[0]} from LD_LIBRARY_PATH (or unset it), or start"
                " the environment with `gpuenv run`, which leaves it out; `gpuenv doctor` names"
                " what puts it there",
            )


_SUFFIX = re.compile(r"-cu(\d+)$")
# CUDA 13's unsuffixed wheels whose version is the toolkit's (nvidia-cufft 12.x is CUDA 13's)
_VERSION_IS_CUDA = frozenset(
    {
        "nvidia-cublas",
        "nvidia-cuda-runtime",
        "nvidia-cuda-nvrtc",
        "nvidia-cuda-cupti",
        "nvidia-cuda-nvcc",
        "nvidia-nvjitlink",
    }
)
# sonames whose number is the CUDA major they belong to (cuFFT's, cuSPARSE's and cuDNN's are not)
_CUDA_MAJOR_SONAME = re.compile(r"lib(?:cudart|cublasLt|cublas|nvrtc|nvJitLink)\.so\.(\d+)")


def built_for_cuda(path: str, owner: Optional[str]) -> Optional[int]:
    """The CUDA major a loaded library file was built for: its wheel's `-cuNN` suffix, CUDA 13's
    unsuffixed nvidia-* wheels' own version, or a soname that carries it; None if unknown."""
    if owner:
        name, _, version = owner.partition(" ")
        suffix = _SUFFIX.search(name.lower())
        if suffix:
            return int(suffix.group(1))
        major = version.split(".", 1)[0]
        if name.lower() in _VERSION_IS_CUDA and major.isdigit():
            return int(major)  # nvidia-cublas 13.0.0.19: CUDA 13
    found = _CUDA_MAJOR_SONAME.match(path.rsplit("/", 1)[-1])
    return int(found.group(1)) if found else None


def _built_for_another_cuda(v: Verdict) -> None:
    """Each framework must load the CUDA libraries built for its own CUDA major: with two
    frameworks in one environment, one may have put another CUDA's cuDNN on the shared path."""
    cuda = v.expected.cuda
    if not cuda or not cuda.split(".", 1)[0].isdigit():
        return
    own = int(cuda.split(".", 1)[0])
    owners = v.facts.get("library_owners") or {}
    if not isinstance(owners, dict):
        return
    wrong = []
    for path in [str(p) for p in v.facts.get("loaded_libraries") or []]:
        owner = owners.get(path)
        major = built_for_cuda(path, str(owner) if owner else None)
        if major is not None and major != own:
            wrong.append(f"{path} ({owner or 'soname'}: CUDA {major})")
    if v.check("CUDA libraries match the build", not wrong, f"CUDA {own}" if not wrong else ""):
        return
    v.problem(
        f"{v.name} is built for CUDA {cuda} but loaded libraries built for another CUDA: "
        + "; ".join(wrong),
        "another framework's NVIDIA wheels replaced its own on the shared nvidia/<lib>/lib"
        " folders: lock frameworks whose NVIDIA libraries agree (`gpuenv resolve` plans them),"
        " or one environment per framework",
    )


def judge(name: str, expectations: Expectations, run: ProbeRun) -> FrameworkReport:
    """The report for one framework from its probe run."""
    v = _start(name, expectations, run)
    if _runnable(v):
        _version(v)
        gpu_used = _ops(v)
        JUDGES[name](v, gpu_used)
        _loaded_from_outside(v)
        _built_for_another_cuda(v)
        gpu_not_expected(v, gpu_used)
    return v.report()
