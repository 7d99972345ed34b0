"""Which interpreter a venv is built on: uv's own find, else one gpuenv's detection knows of
(pyenv's versions folder, uv-managed, PATH), which `uv venv --python X.Y` would not search."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpuenv.envs.python_check import _discovered


def _fake_pyenv(root: Path, version: str) -> Path:
    minor = ".".join(version.split(".")[:2])
    exe = root / "versions" / version / "bin" / f"python{minor}"
    exe.parent.mkdir(parents=True)
    exe.symlink_to(sys.executable)
    return exe


def test_a_pyenv_version_uv_does_not_see_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = _fake_pyenv(tmp_path / "pyenv", "3.98.1")  # no uv knows a 3.98
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    assert _discovered("3.98") == exe


def test_nothing_found_is_none_not_a_guess(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "none"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", os.defpath)
    assert _discovered("3.97") is None
