"""Every file gpuenv reads goes through the bounded, non-blocking reader.

Hostile round three: a FIFO or /dev/zero at the setup record, kernel.json, uv.toml /
UV_CONFIG_FILE (24 GB of memory at 78 s on /dev/zero) or among GPUENV_RECIPES/*.toml hung
gpuenv, and deep nesting there was a traceback. Each case runs gpuenv in a child process with a
timeout: a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.recipes.kb_cache import recipes_dir
from installrepos import gpuenv

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")

DEEP_TOML = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_uv_config_file(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "uv.toml"
    if kind == "fifo":
        os.mkfifo(path)
    target = "/dev/zero" if kind == "zero" else str(path)
    args = ("lock", "jax", "--no-gpu", "--os", "linux", "--arch", "x86_64")
    out = gpuenv(*args, "-o", str(tmp_path / "a.yml"), env={"UV_CONFIG_FILE": target}, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "uv configuration" in out.stderr and "Traceback" not in out.stderr


def test_a_deeply_nested_uv_config_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.index.config import IndexConfigError, uv_sources

    path = tmp_path / "uv.toml"
    path.write_text('index-url = "http://127.0.0.1:9/simple"\n' + DEEP_TOML)
    monkeypatch.setenv("UV_CONFIG_FILE", str(path))
    with pytest.raises(IndexConfigError, match=r"nested too deeply|cannot be read"):
        uv_sources()


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_pip_config_file(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "pip.conf"
    if kind == "fifo":
        os.mkfifo(path)
    target = "/dev/zero" if kind == "zero" else str(path)
    out = gpuenv(
        "lock",
        "jax",
        "--no-gpu",
        "-o",
        str(tmp_path / "a.yml"),
        env={"PIP_CONFIG_FILE": target},
        timeout=60,
    )
    assert out.returncode == 2 and "pip configuration" in out.stderr, out.stderr


@pytest.mark.parametrize("kind", ["fifo", "deep", "huge"])
def test_setup_record(kind: str) -> None:
    from gpuenv.setup.record import record_path

    path = record_path("lab")
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "deep":
        path.write_text(DEEP_JSON)
    else:
        with path.open("wb") as fh:
            fh.truncate(5 << 30)  # sparse: 5 GB that were never written
    done = _python("from gpuenv.setup.record import read_record; print(read_record('lab'))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


def test_add_checks_the_name_before_using_it(tmp_path: Path) -> None:
    from gpuenv.envs.store import store_root

    store_root().mkdir(parents=True)
    # where `.setup/../../x.json` leads: a FIFO there hung `add -n ../../x` before the check
    os.mkfifo(store_root().parent / "x.json")
    out = gpuenv("add", "-n", "../../x", "tinytool", timeout=60)
    assert out.returncode == 2 and "environment name" in out.stderr, out.stderr


@pytest.mark.parametrize("kind", ["fifo", "deep"])
def test_kernel_json(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "jupyter" / "kernels" / "gpuenv-lab"
    folder.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(folder / "kernel.json")
    else:
        (folder / "kernel.json").write_text(DEEP_JSON)
    done = _python(
        "from pathlib import Path; from gpuenv.envs.jupyter import register_kernel, KernelError\n"
        f"env = {{'JUPYTER_DATA_DIR': {str(tmp_path / 'jupyter')!r}}}\n"
        "try:\n    register_kernel(Path('/p'), 'lab', '', {}, env)\n"
        "except KernelError as exc:\n    print('refused', exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused") and "not written by gpuenv" in done.stdout


@pytest.mark.parametrize("kind", ["fifo", "deep"])
def test_a_knowledge_base_file(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    shutil.copytree(recipes_dir(), root)
    if kind == "fifo":
        os.mkfifo(root / "zz-extra.toml")
    else:
        (root / "zz-extra.toml").write_text(DEEP_TOML)
    out = gpuenv("resolve", "jax", "--no-gpu", env={"GPUENV_RECIPES": str(root)}, timeout=60)
    assert out.returncode == 4, out.stderr
    assert "zz-extra.toml" in out.stderr and "Traceback" not in out.stderr
