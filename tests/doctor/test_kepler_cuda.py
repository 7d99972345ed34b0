"""Kepler's two halves end with different CUDA: CUDA 11.0 dropped sm_30/sm_32 (CUDA 11.0 release
notes, deprecated and dropped features: support for Kepler sm_30 and sm_32 products dropped),
so a GTX 680 (3.0) runs builds up to CUDA 10.2, a K80 (3.7) up to 11.8 (11.8 ptxas still lists
sm_35/sm_37; 12.0 dropped them).
"""

from __future__ import annotations

from gpuenv.doctor.driver import recommended_driver
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase


def _advice(kb: KnowledgeBase, gpu: str) -> str:
    machine = describe_machine(kb, gpu=gpu, driver="470.82.01", os_name="linux", arch=None)
    advice = recommended_driver(kb, machine)
    assert advice is not None
    return advice.text


def test_sm_30_tops_out_at_cuda_10_2(kb: KnowledgeBase) -> None:
    assert "up to CUDA 10.2" in _advice(kb, "3.0")


def test_sm_37_tops_out_at_cuda_11_8(kb: KnowledgeBase) -> None:
    assert "up to CUDA 11.8" in _advice(kb, "Tesla K80")
