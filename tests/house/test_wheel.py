"""gpuenv's own wheel builds the way a user's `pip install .` builds it: in pip's isolated build
environment, with the knowledge base parsed into it (hatch_build.py). Network: pip fetches the
build requirements (hatchling, packaging) from the configured index."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.network
def test_the_wheel_builds_in_isolation_with_the_parsed_knowledge_base(tmp_path: Path) -> None:
    # a fresh venv, as a user's: nothing of gpuenv's test environment (packaging, an editable
    # gpuenv) can stand in for what the isolated build environment must bring
    import venv

    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    out = tmp_path / "wheel"
    done = subprocess.run(
        [str(python), "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("gpuenv-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("gpuenv/_cache/recipes/") and n.endswith(".pickle") for n in names)
    assert "gpuenv/_recipes/gpus.toml" in names or any(
        n.startswith("gpuenv/_recipes/") for n in names
    )
    assert not any("conda_lock_api" in n for n in names)
