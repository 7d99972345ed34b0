# ruff: noqa: UP006, UP035, SIM105 - runs under Python 3.8: typing.List/Dict, no newer idioms
"""Facts about TensorFlow in this environment, as one JSON line (see _probe_common). Python 3.8+.

Works back to TensorFlow 1.15: eager execution is switched on where it is off, and the
tf.config.experimental spellings are tried where the stable ones are missing.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    from gpuenv.verify.probes import _probe_common as common
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _probe_common as common

Result = common.Result


def _find(tf: Any, *paths: str) -> Any:
    """The first attribute path that exists, e.g. 'config.list_physical_devices'."""
    for path in paths:
        obj = tf
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    return None


def _devices(tf: Any, result: Result, kind: str) -> List[str]:
    lister = _find(tf, "config.list_physical_devices", "config.experimental.list_physical_devices")
    if lister is None:
        result[f"{kind.lower()}_devices_error"] = "no tf.config.list_physical_devices"
        return []
    try:
        return [str(getattr(d, "name", d)) for d in lister(kind)]
    except Exception as exc:
        result[f"{kind.lower()}_devices_error"] = common.error_text(exc)
        return []


def _matmul(tf: Any, result: Result, device: str) -> None:
    a, b = common.matmul_inputs()
    rec = common.op_record("matmul", device)
    result["ops"].append(rec)
    common.stage(f"matmul on {device}")
    try:
        with tf.device(device):
            out = tf.matmul(tf.constant(a, dtype=tf.float32), tf.constant(b, dtype=tf.float32))
        rec["placed_on"] = str(getattr(out, "device", ""))
        common.check_op(rec, out.numpy().tolist(), common.matmul_reference(a, b))
    except Exception as exc:
        rec["error"] = common.error_text(exc)


def probe(result: Result) -> None:
    common.collect_messages(result, ["tensorflow", "absl"])
    common.stage("import tensorflow")
    try:
        tf = importlib.import_module("tensorflow")
    except Exception as exc:
        result["import_error"] = common.error_text(exc)
        return
    result["import_ok"] = True
    result["version"] = str(getattr(tf, "__version__", ""))
    eager = _find(tf, "executing_eagerly")
    if eager is not None and not eager():
        enable = _find(tf, "compat.v1.enable_eager_execution", "enable_eager_execution")
        if enable is not None:
            enable()
    common.stage("tf.test.is_built_with_cuda()")
    built = _find(tf, "test.is_built_with_cuda")
    result["built_with_cuda"] = bool(built()) if built is not None else None
    info = _find(tf, "sysconfig.get_build_info")
    try:
        build_info = dict(info()) if info is not None else {}
    except Exception as exc:
        build_info = {}
        result["build_info_error"] = common.error_text(exc)
    result["build_info"] = {
        k: str(v)
        for k, v in build_info.items()
        if k
        in (
            "cuda_version",
            "cudnn_version",
            "is_cuda_build",
            "is_rocm_build",
            "cuda_compute_capabilities",
        )
    }
    common.stage("tf.config.list_physical_devices('GPU')")
    gpus = _devices(tf, result, "GPU")
    result["gpus"] = gpus
    grow = _find(tf, "config.experimental.set_memory_growth")
    lister = _find(tf, "config.list_physical_devices", "config.experimental.list_physical_devices")
    if gpus and grow is not None and lister is not None:
        for device in lister("GPU"):
            try:
                grow(device, True)  # do not take all GPU memory for a 32 x 32 product
            except Exception:  # already initialised: harmless here
                pass
    details = _find(tf, "config.experimental.get_device_details")
    if gpus and details is not None and lister is not None:
        try:
            result["gpu_details"] = [
                {k: str(v) for k, v in details(d).items()} for d in lister("GPU")
            ]
        except Exception as exc:
            result["gpu_details_error"] = common.error_text(exc)
    _matmul(tf, result, "/CPU:0")
    if gpus:
        _matmul(tf, result, "/GPU:0")


if __name__ == "__main__":
    common.run("tensorflow", probe)
