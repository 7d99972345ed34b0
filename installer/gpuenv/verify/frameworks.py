"""Per-framework rules: the build each framework reports, and why a promised GPU is unused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuenv.verify.arch import arch_coverage, cudnn_text, prefix_match
from gpuenv.verify.verdict import REINSTALL, Verdict, hidden_by_env

_CU_VARIANT = re.compile(r"^cu(\d+)(\d)$")  # cu118 -> 11.8, cu126 -> 12.6


def _variant_cuda(variant: str | None) -> str | None:
    m = _CU_VARIANT.match(variant or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _check_versions(v: Verdict, cuda: Any, cudnn: Any) -> None:
    """CUDA must match the plan on the parts both give; cuDNN on its major version."""
    want_cuda = v.expected.cuda or _variant_cuda(v.expected.variant)
    if want_cuda and cuda:
        ok = prefix_match(str(cuda), want_cuda)
        if not v.check("CUDA version", ok, f"{cuda}, plan: {want_cuda}"):
            v.problem(f"{v.name} is built for CUDA {cuda}, the plan chose {want_cuda}", REINSTALL)
    if v.expected.cudnn and cudnn:
        ok = str(cudnn).split(".")[0] == v.expected.cudnn.split(".")[0]
        if not v.check("cuDNN version", ok, f"{cudnn}, plan: {v.expected.cudnn}"):
            v.problem(f"{v.name} uses cuDNN {cudnn}, the plan chose {v.expected.cudnn}", REINSTALL)
        elif not prefix_match(str(cudnn), v.expected.cudnn):
            v.notes.append(
                f"cuDNN {cudnn} differs from the plan's {v.expected.cudnn} only in "
                "its minor version, which cuDNN keeps compatible"
            )


def torch(v: Verdict, gpu_used: bool) -> None:
    f = v.facts
    cuda, hip, cudnn = f.get("cuda"), f.get("hip"), cudnn_text(f.get("cudnn_version"))
    v.build = (
        f"CUDA {cuda}" + (f", cuDNN {cudnn}" if cudnn else "")
        if cuda
        else f"ROCm {hip}"
        if hip
        else "CPU"
    )
    if v.expected.variant == "cpu" and (cuda or hip):
        v.check("build", False, f"{v.build}, plan: cpu")
        v.problem(
            f"torch {v.version} is a {v.build} build, the plan chose the CPU build", REINSTALL
        )
    _check_versions(v, cuda, cudnn)
    devices = f.get("devices") or []
    if f.get("cuda_available") and devices:
        dev = devices[0]
        cc, name = dev.get("capability"), dev.get("name")
        v.device = f"cuda:0 {name} (compute capability {cc})"
        if v.expectations.gpu_cc and cc and cc != v.expectations.gpu_cc:
            v.notes.append(
                f"the plan was made for compute capability {v.expectations.gpu_cc}, "
                f"this GPU has {cc}"
            )
        if cc:
            _arch(v, list(f.get("arch_list") or []), str(cc), str(name))
    if not v.wants_gpu or gpu_used:
        return
    if v.expectations.accelerator == "mps":
        v.problem(
            "torch.backends.mps.is_available() is False: MPS needs macOS 12.3+ on Apple "
            "silicon and an arm64 Python",
            REINSTALL,
        )
    elif not cuda and not hip:
        v.problem(
            f"torch {v.version} is a CPU build (torch.version.cuda is None); the plan "
            f"chose the {v.expected.variant} build",
            f"{REINSTALL}: the CPU wheel came from the default index instead of the "
            f"{v.expected.variant} index",
        )
    elif hidden_by_env(v):
        pass
    elif not f.get("cuda_available"):
        error = (
            f.get("cuda_init_error")
            or f.get("cuda_device_count_raw_error")
            or (f"torch._C._cuda_getDeviceCount() = {f.get('cuda_device_count_raw')}")
        )
        v.problem(
            f"torch.cuda.is_available() is False with a CUDA {cuda} build: the NVIDIA "
            f"driver is missing or too old for CUDA {cuda} ({error})",
            f"install an NVIDIA driver that supports CUDA {cuda} (`nvidia-smi` shows the "
            "newest CUDA the driver supports) and reboot",
        )
    elif not v.problems:
        v.problem("torch sees the GPU but ran nothing on it")
    v.check("GPU", False, "the plan promised the GPU; torch does not use it")


def _arch(v: Verdict, arch_list: list[str], cc: str, name: str) -> None:
    sm = "sm_" + cc.replace(".", "")
    coverage = arch_coverage(arch_list, cc)
    listed = " ".join(arch_list) or "nothing"
    if coverage == "sass":
        v.check("architecture", True, f"{sm} is covered by {listed}")
    elif coverage == "ptx":
        v.check("architecture", True, f"only PTX covers {sm} ({listed})")
        v.notes.append(
            f"no machine code for {sm}: kernels are JIT-compiled from PTX at first "
            "start (slow; needs a driver at least as new as the build's toolkit)"
        )
    else:
        v.check("architecture", False, f"{sm} not in {listed}")
        v.problem(
            f"no kernel image for {name} ({sm}): this torch build has kernels for "
            f"{listed} only, so GPU ops fail with 'no kernel image is available'",
            f"resolve again for this GPU (gpuenv resolve torch --gpu {cc}): it picks a "
            f"build that still has {sm} kernels",
        )


def tensorflow(v: Verdict, gpu_used: bool) -> None:
    f = v.facts
    info = f.get("build_info") or {}
    cuda, cudnn = info.get("cuda_version"), info.get("cudnn_version")
    built = f.get("built_with_cuda")
    v.build = f"CUDA {cuda or '?'}, cuDNN {cudnn or '?'}" if built else "CPU"
    if v.wants_gpu or v.expected.cuda:
        _check_versions(v, cuda, cudnn)
    gpus = f.get("gpus") or []
    if gpus:
        v.device = f"/GPU:0 ({len(gpus)} GPU{'s' if len(gpus) > 1 else ''} visible)"
    for op in f.get("ops") or []:
        if (
            "GPU" in str(op.get("device"))
            and op.get("ok")
            and "GPU" not in str(op.get("placed_on", "GPU"))
        ):
            v.problem(f"the op for /GPU:0 was placed on {op.get('placed_on')}")
    if not v.wants_gpu or gpu_used:
        return
    logs = v.log_lines()
    if not built:
        fix = (
            REINSTALL
            if f.get("platform") != "win32"
            else "TensorFlow 2.10 was the last release with GPU support on native Windows: use "
            "WSL2, or pin tensorflow<2.11"
        )
        v.problem(
            f"TensorFlow {v.version} is not built with CUDA "
            "(tf.test.is_built_with_cuda() is False)",
            fix,
        )
    elif hidden_by_env(v):
        pass
    elif not gpus:
        driver = any(re.search(r"cuInit|CUDA_ERROR|driver", ln) for ln in logs)
        cause = (
            "the driver failed to initialise (cuInit)"
            if driver
            else "likely the CUDA/cuDNN libraries it needs were not found"
        )
        v.problem(
            f"TensorFlow is built with CUDA {cuda or '?'} and cuDNN {cudnn or '?'} but "
            f"lists no GPU: {cause}" + ("; TensorFlow said: " + " | ".join(logs) if logs else ""),
            "check `nvidia-smi`"
            if driver
            else f"install the CUDA {cuda or ''} and cuDNN {cudnn or ''} libraries TensorFlow was "
            "built against (tensorflow[and-cuda] brings them as nvidia-* wheels)",
        )
    v.check("GPU", False, "the plan promised the GPU; TensorFlow does not use it")


def jax(v: Verdict, gpu_used: bool) -> None:
    f = v.facts
    plugins = dict(f.get("plugins") or {})
    jaxlib = str(f.get("jaxlib_version") or "")
    backend = f.get("backend")
    names = ", ".join(f"{k} {val}" for k, val in sorted(plugins.items()))
    v.build = f"backend {backend}" + (f", {names}" if names else f", jaxlib {jaxlib}")
    devices = f.get("devices") or []
    if devices and backend != "cpu":
        d = devices[0]
        v.device = f"{d.get('platform')}:{d.get('id')} {d.get('kind')}"
    if not v.wants_gpu or gpu_used:
        return
    logs = v.log_lines()
    if not plugins and "cuda" not in jaxlib:
        v.problem(
            f"JAX has no CUDA support installed (no jax-cuda plugin; jaxlib {jaxlib} is CPU-only)",
            f"{REINSTALL} (jax[cuda12] brings the plugin)",
        )
    elif hidden_by_env(v):
        pass
    else:
        said = "; ".join(x for x in [f.get("gpu_error"), *logs] if x)
        v.problem(
            f"JAX fell back to the CPU although its CUDA support ({names or jaxlib}) is "
            f"installed: {said or 'no reason given'}",
            "check the driver with `nvidia-smi`: the plugin needs one that supports its "
            "CUDA version, and the nvidia-* wheels of the lockfile in the same environment",
        )
    v.check("GPU", False, "the plan promised the GPU; JAX does not use it")


JUDGES: dict[str, Callable[[Verdict, bool], None]] = {
    "torch": torch,
    "tensorflow": tensorflow,
    "jax": jax,
}
