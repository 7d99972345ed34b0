"""Probe scripts that gpuenv runs with an environment's OWN interpreter (`python -I probe.py`).

Each prints one JSON object of facts on the line starting with ``RESULT_MARKER`` and never
imports gpuenv (the environment does not have it). They run on Python 3.8+ and with old
framework releases (TensorFlow 1.15, torch 1.13), so every attribute is looked up defensively.
Judging the facts happens in gpuenv.verify.judge.
"""

from __future__ import annotations

from pathlib import Path

RESULT_MARKER = "GPUENV-PROBE-RESULT "
STAGE_MARKER = "gpuenv-probe: stage "
PROBE_DIR = Path(__file__).resolve().parent


def probe_path(name: str) -> Path:
    """The script for a framework ("torch", "tensorflow", "jax") or "env"."""
    return PROBE_DIR / f"{name}_probe.py"
