"""Input no GPU or driver has, and names that fit exactly one GPU.

Sources: NVIDIA driver versions have two or three dotted parts (457.49 Windows, 535.183.01
Linux; NVIDIA's driver download pages and CUDA release notes Table 3). The compute capabilities
NVIDIA's GPUs have are those of developer.nvidia.com/cuda-gpus: 9.0 then 10.0 (no 9.x beyond
9.0), 7.5 then 8.0 (no 7.7), 12.0/12.1 (no 12.9). Jetson AGX Thor is the one Thor
(developer.nvidia.com/cuda-gpus: "Jetson T5000, T4000" = 11.0, sold as Jetson AGX Thor).
"""

from __future__ import annotations

import pytest

from gpuenv.machine import MachineError, parse_driver_version


def test_a_four_part_driver_is_refused() -> None:
    with pytest.raises(MachineError, match="not an NVIDIA driver version"):
        parse_driver_version("560.94.01.02")
    assert parse_driver_version("535.183.01") == (535, 183, 1)


def test_cli_refuses_a_four_part_driver_with_exit_2(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    out = gpuenv_cli(
        "resolve", "torch", "--gpu", "8.6", "--driver", "560.94.01.02", "--os", "linux"
    )
    assert out.returncode == 2 and "560.94.01.02" in out.stderr


@pytest.mark.parametrize(
    ("cc", "nearest"),
    [("9.9", "9.0 and 10.0"), ("7.7", "7.5 and 8.0"), ("12.9", "12.1"), ("13.0", "12.1")],
)
def test_a_compute_capability_no_gpu_has_is_refused(describe, cc, nearest) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MachineError, match="no known GPU generation") as err:
        describe(cc, "580.95.05", "linux")
    assert nearest in str(err.value)


def test_a_name_that_fits_one_gpu_is_that_gpu(describe) -> None:  # type: ignore[no-untyped-def]
    machine = describe("Jetson Thor", "580.95.05", "linux", "aarch64")
    assert machine.gpus[0].compute_capability == "11.0"
