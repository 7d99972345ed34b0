"""Facts about JAX in this environment, as one JSON line (see _probe_common). Python 3.8+."""

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


def _device(d: Any) -> Result:
    return {
        "id": getattr(d, "id", None),
        "platform": str(getattr(d, "platform", "")),
        "kind": str(getattr(d, "device_kind", "")),
        "compute_capability": getattr(d, "compute_capability", None),
    }


def probe(result: Result) -> None:
    common.collect_messages(result, ["jax", "jax._src.xla_bridge"])
    result["plugins"] = common.distributions(["jax-cuda", "jax_cuda", "jax-rocm", "jax-metal"])
    common.stage("import jax")
    try:
        jax = importlib.import_module("jax")
        jnp = importlib.import_module("jax.numpy")
    except Exception as exc:
        result["import_error"] = common.error_text(exc)
        return
    result["import_ok"] = True
    result["version"] = str(getattr(jax, "__version__", ""))
    try:
        jaxlib = importlib.import_module("jaxlib")
        result["jaxlib_version"] = str(getattr(jaxlib, "__version__", ""))
    except Exception as exc:
        result["jaxlib_error"] = common.error_text(exc)
    common.stage("jax.devices()")
    try:
        result["devices"] = [_device(d) for d in jax.devices()]
    except Exception as exc:
        result["devices"] = []
        result["devices_error"] = common.error_text(exc)
    try:
        result["backend"] = str(jax.default_backend())
    except Exception as exc:
        result["backend"] = None
        result["backend_error"] = common.error_text(exc)
    if result["backend"] == "cpu":
        common.stage("jax.devices('gpu')")
        try:  # why there is no GPU, in JAX's own words
            jax.devices("gpu")
        except Exception as exc:
            result["gpu_error"] = common.error_text(exc)
    a, b = common.matmul_inputs()
    rec = common.op_record("dot", str(result["backend"]))
    result["ops"].append(rec)
    common.stage("jnp.dot on the default device")
    try:
        out = jnp.dot(jnp.asarray(a, dtype=jnp.float32), jnp.asarray(b, dtype=jnp.float32))
        out.block_until_ready()
        devices = getattr(out, "devices", None)
        placed = sorted(devices()) if callable(devices) else [getattr(out, "device", "")]
        rec["placed_on"] = ", ".join(str(d) for d in placed)
        common.check_op(rec, out.tolist(), common.matmul_reference(a, b))
    except Exception as exc:
        rec["error"] = common.error_text(exc)


if __name__ == "__main__":
    common.run("jax", probe)
