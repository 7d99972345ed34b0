"""For real: `gpuenv setup jax --jupyter` from the default index, then a notebook kernel started
by name through Jupyter's own client runs a cell that imports the framework.

Marked `network`: it downloads JAX, ipykernel and their dependencies (once per cache).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from installrepos import gpuenv, run_in
from isolation import real_indexes

pytestmark = pytest.mark.network
PY = f"{sys.version_info.major}.{sys.version_info.minor}"

_RUN_A_CELL = textwrap.dedent(
    """
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name="gpuenv-nb", startup_timeout=120)
    try:
        outputs = []
        kc.execute_interactive(
            "import jax, jax.numpy as jnp; print(jax.__version__, float(jnp.ones(4).sum()))",
            timeout=120,
            output_hook=lambda msg: outputs.append(msg["content"].get("text", "")),
        )
        print("".join(outputs).strip())
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    """
)


def test_a_registered_kernel_runs_a_cell_with_the_framework(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV_NO_CONFIG", raising=False)
    real_indexes(monkeypatch)
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "real-cache"))
    jupyter = tmp_path / "jupyter"
    env = {"JUPYTER_DATA_DIR": str(jupyter)}
    done = gpuenv(
        "setup", "jax", "--no-gpu", "--python", PY, "--jupyter", "-n", "nb", "--json", env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["verified"] and result["kernel"].endswith("gpuenv-nb")
    spec = json.loads((jupyter / "kernels" / "gpuenv-nb" / "kernel.json").read_text())
    python = Path(spec["argv"][0])
    # the kernel's own environment starts it, as a notebook server would, found by name
    cell = run_in(
        python, f"import os; os.environ['JUPYTER_DATA_DIR'] = {str(jupyter)!r}\n" + _RUN_A_CELL
    )
    version, total = cell.split()
    assert float(total) == 4.0 and version[0].isdigit()
    removed = gpuenv("envs", "remove", "nb", env=env)
    assert removed.returncode == 0 and not (jupyter / "kernels" / "gpuenv-nb").exists()
