"""scripts/bootstrap.sh checks the Python first (3.10 or newer, able to make a venv) and says
so, instead of failing later inside pip."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")


def _fake_python(folder: Path, version: str, venv_ok: bool = True) -> Path:
    """A stand-in interpreter: answers the version check as `version` would."""
    script = folder / "python"
    major, minor = (int(p) for p in version.split(".")[:2])
    old = "1" if (major, minor) < (3, 10) else "0"
    script.write_text(
        "#!/bin/sh\n"
        'case "$2" in\n'
        f"  *version_info\\ \\<*) exit {old} ;;\n"
        f"  *print*) echo {version} ;;\n"
        f"  *ensurepip*) exit {0 if venv_ok else 1} ;;\n"
        "esac\nexit 0\n"
    )
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("version", "venv_ok", "says"),
    [("3.8.10", True, "needs Python 3.10 or newer"), ("3.11.2", False, "python3-venv")],
)
def test_a_python_that_cannot_run_gpuenv_is_refused_first(tmp_path, version, venv_ok, says) -> None:  # type: ignore[no-untyped-def]
    python = _fake_python(tmp_path, version, venv_ok)
    done = subprocess.run(
        ["sh", str(ROOT / "scripts" / "bootstrap.sh")],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(python), "GPUENV_VENV": str(tmp_path / "v")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and says in done.stderr
    assert version in done.stderr or says == "python3-venv"
    assert not (tmp_path / "v").exists()
