"""Windows arch lists are per release: torch 2.8.0+cu126 for Windows has no sm_50/sm_60.

pytorch/pytorch#160575 (issue thread): the 2.8.0 Windows cu126 wheels' get_arch_list() starts at
sm_61 (6.1;7.0;7.5;8.0;8.6;9.0); pytorch/pytorch#160586 restored 5.0 and 6.0 for 2.9. The Linux
cu126 build keeps sm_50 (.ci/manywheel/build_cuda.sh, 12.6 branch: "5.0;6.0;...").
"""

from __future__ import annotations

from gpuenv.resolve import resolve


def test_torch_2_8_for_windows_cu126_has_no_sm_50(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # pytorch/pytorch#160575: torch 2.8.0+cu126 for Windows lists sm_61..sm_90 (no sm_50/sm_60);
    # #160586 restored them for 2.9. The Linux cu126 build has sm_50.
    win = resolve(describe("GeForce 940M", "572.16", "windows"), ["torch==2.8.0"], kb=kb)
    assert not win.frameworks["torch"].gpu
    linux = resolve(describe("GeForce 940M", "570.26", "linux"), ["torch==2.8.0"], kb=kb)
    assert linux.frameworks["torch"].gpu
