"""Facts about torch in this environment, as one JSON line (see _probe_common). Python 3.8+."""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuenv.verify.probes import _probe_common as common
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _probe_common as common

Result = common.Result


def _call(result: Result, key: str, fn: Any, *args: Any) -> Any:
    """fn(*args) into result[key]; an exception goes to result[key + '_error'] instead."""
    try:
        value = fn(*args)
    except Exception as exc:
        result[key] = None
        result[key + "_error"] = common.error_text(exc)
        return None
    result[key] = value
    return value


def _ops(torch: Any, result: Result, device: str) -> None:
    """matmul and conv2d on `device`, checked against a pure-Python reference."""
    a, b = common.matmul_inputs()
    x, w = common.conv_inputs()
    cases = (
        ("matmul", torch.matmul, (a, b), common.matmul_reference(a, b)),
        ("conv2d", torch.nn.functional.conv2d, (x, w), common.conv2d_reference(x, w)),
    )
    for name, fn, args, want in cases:
        rec = common.op_record(name, device)
        result["ops"].append(rec)
        common.stage(f"{name} on {device}")
        try:
            out = fn(*[torch.tensor(t, dtype=torch.float32, device=device) for t in args])
            common.check_op(rec, out.to("cpu").tolist(), want)
        except Exception as exc:
            rec["error"] = common.error_text(exc)


def probe(result: Result) -> None:
    common.collect_messages(result, ["torch"])
    common.stage("import torch")
    try:
        torch = importlib.import_module("torch")
    except Exception as exc:
        result["import_error"] = common.error_text(exc)
        return
    result["import_ok"] = True
    result["version"] = str(getattr(torch, "__version__", ""))
    version = getattr(torch, "version", None)
    result["cuda"] = getattr(version, "cuda", None)
    result["hip"] = getattr(version, "hip", None)
    cuda: Any = getattr(torch, "cuda", None)
    common.stage("torch.cuda.get_arch_list()")
    _call(result, "arch_list", lambda: list(cuda.get_arch_list()))
    common.stage("torch.backends.cudnn.version()")
    _call(result, "cudnn_version", lambda: torch.backends.cudnn.version())
    common.stage("torch.cuda.is_available()")
    available = bool(_call(result, "cuda_available", lambda: bool(cuda.is_available())))
    if not available and result.get("cuda") is not None:
        # Why not: the driver's own error, from torch.cuda.init() or the device count.
        common.stage("torch.cuda.init()")
        _call(result, "cuda_init", lambda: cuda.init())
        getter = getattr(getattr(torch, "_C", None), "_cuda_getDeviceCount", None)
        if getter is not None:
            _call(result, "cuda_device_count_raw", getter)
    common.stage("torch.cuda.device_count()")
    count = _call(result, "device_count", lambda: int(cuda.device_count())) if available else 0
    devices = []
    for index in range(count or 0):
        common.stage(f"torch.cuda device {index}")
        dev: Result = {"index": index}
        _call(dev, "name", cuda.get_device_name, index)
        cap = _call(dev, "capability", cuda.get_device_capability, index)
        dev["capability"] = f"{cap[0]}.{cap[1]}" if cap else None
        devices.append(dev)
    result["devices"] = devices
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    _call(result, "mps_available", lambda: bool(mps is not None and mps.is_available()))
    _ops(torch, result, "cpu")
    if available:
        _ops(torch, result, "cuda:0")
    elif result.get("mps_available"):
        _ops(torch, result, "mps")


if __name__ == "__main__":
    common.run("torch", probe)
