"""For real: lock a CPU JAX stack from the default index, install it, verify it, re-install (no-op).

Marked `network`: it downloads about 110 MB of wheels (once per cache).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from installrepos import gpuenv
from isolation import real_indexes

pytestmark = pytest.mark.network
PY = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def real_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UV_NO_CONFIG", raising=False)
    real_indexes(monkeypatch)
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "real-cache"))


def test_lock_install_verify_noop(real_index: None, tmp_path: Path) -> None:
    lockfile = tmp_path / "jax-cpu.lock.yml"
    locked = gpuenv(
        "lock",
        "jax",
        "--os",
        "linux",
        "--arch",
        "x86_64",
        "--python",
        PY,
        "--portable",
        "-o",
        str(lockfile),
    )
    assert locked.returncode == 0, locked.stderr
    installed = gpuenv("install", str(lockfile), "--name", "jax-cpu")
    assert installed.returncode == 0, installed.stderr
    verified = gpuenv("verify", "--name", "jax-cpu", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = json.loads(verified.stdout)
    assert report["ok"] and report["frameworks"]["jax"]["ok"]
    again = gpuenv("install", str(lockfile), "--name", "jax-cpu")
    assert again.returncode == 0 and "nothing to do" in again.stdout
