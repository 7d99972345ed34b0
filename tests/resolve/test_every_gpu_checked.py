"""Several GPUs: every planned GPU is checked (architecture, the driver its generation needs,
known-broken rows), not only the one with the lowest compute capability; WSL2 is checked against
NVIDIA's Windows driver numbers. Each pair is one where the wrong rule gives another answer.
Expected answers from primary sources, not from recipes/:

- developer.nvidia.com/cuda-gpus: GeForce GTX 1080 Ti = 6.1, RTX 3090 = 8.6, RTX 5090 = 12.0.
- Blackwell needs an R570 driver at least (CUDA 12.8, the first toolkit with Blackwell, ships
  570.26 / 570.65: NVIDIA's toolkit release notes and its architecture matrix).
- tensorflow/tensorflow#89272, #99592, #101746: pip TensorFlow 2.16-2.20 fails on sm_120;
  tensorflow/tensorflow#42958: TensorFlow 1.x does not run on RTX 30 (Ampere).
- NVIDIA's minor-version compatibility floors: CUDA 12.x >= 525.60.13 (Linux) / 527.41
  (Windows); CUDA 13.x >= 580.65.06 (Linux); 580.88 is the first R580 Windows driver. Under WSL2
  the driver is the Windows host's (NVIDIA's CUDA on WSL user guide), so Windows numbers apply.
"""

from __future__ import annotations

from packaging.version import Version

from gpuenv.machine import Driver, Gpu, Machine, OSInfo
from gpuenv.resolve import resolve

PASCAL = Gpu("GeForce GTX 1080 Ti", "6.1", index=0)
AMPERE = Gpu("GeForce RTX 3090", "8.6", index=1)
BLACKWELL = Gpu("GeForce RTX 5090", "12.0", index=1)


def two(gpu_a: Gpu, gpu_b: Gpu, driver: str) -> Machine:
    return Machine(
        os=OSInfo("linux"),
        arch="x86_64",
        platform="linux-64",
        driver=Driver(driver),
        gpus=(gpu_a, gpu_b),
    )


def test_the_newer_gpus_driver_floor_counts_too(kb) -> None:  # type: ignore[no-untyped-def]
    # R560 runs CUDA on the GTX 1080 Ti but not on the RTX 5090 (Blackwell needs R570). jax's
    # CUDA 12 plugin (sm_50..sm_100 SASS, compute_120 PTX: jax .bazelrc, measured from its
    # wheels) covers both GPUs, so only the driver decides.
    machine = two(PASCAL, BLACKWELL, "560.35.03")
    both = resolve(machine, ["jax"], kb=kb)
    assert not both.frameworks["jax"].gpu
    assert any("570.26" in f for f in both.fixes), both.fixes
    # planning for the 1080 Ti alone, the same driver runs CUDA
    pascal_only = resolve(machine, ["jax"], kb=kb, gpu_index=0)
    assert pascal_only.frameworks["jax"].gpu
    # and with an R570 driver both GPUs run it
    assert resolve(two(PASCAL, BLACKWELL, "570.26"), ["jax"], kb=kb).frameworks["jax"].gpu


def test_a_broken_row_on_the_newer_gpu_counts_too(kb) -> None:  # type: ignore[no-untyped-def]
    machine = two(Gpu("GeForce RTX 3090", "8.6", index=0), BLACKWELL, "580.95.05")
    both = resolve(machine, ["tensorflow"], kb=kb)
    fw = both.frameworks["tensorflow"]
    # pip TensorFlow 2.16-2.20 is broken on sm_120: with the 5090 planned, none of them is chosen
    assert not (Version("2.16") <= Version(fw.version) < Version("2.21")) or not fw.gpu
    ampere_only = resolve(machine, ["tensorflow"], kb=kb, gpu_index=0)
    assert ampere_only.frameworks["tensorflow"].gpu
    assert Version(ampere_only.frameworks["tensorflow"].version) >= Version("2.16")


def test_tf1_with_an_ampere_gpu_beside_a_pascal_one(kb) -> None:  # type: ignore[no-untyped-def]
    machine = two(PASCAL, AMPERE, "535.104.05")
    both = resolve(machine, ["tensorflow<2"], kb=kb, python="3.7")
    assert not both.frameworks["tensorflow"].gpu  # the 3090 cannot run TF 1.x
    pascal_only = resolve(machine, ["tensorflow<2"], kb=kb, python="3.7", gpu_index=0)
    assert pascal_only.frameworks["tensorflow"].gpu


def test_wsl2_reads_cuda_12s_windows_floor(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # 526.98 is above CUDA 12's Linux floor (525.60.13) and below its Windows one (527.41)
    below = resolve(describe("GeForce RTX 3060", "526.98", "wsl"), ["torch"], kb=kb)
    fw = below.frameworks["torch"]
    assert not (fw.gpu and fw.cuda and fw.cuda.startswith("12."))
    at = resolve(describe("GeForce RTX 3060", "527.41", "wsl"), ["torch"], kb=kb)
    assert at.frameworks["torch"].gpu and at.frameworks["torch"].cuda.startswith(("12.", "13."))


def test_wsl2_reads_cuda_13s_windows_floor(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # 580.70 is above CUDA 13's Linux floor (580.65.06) and below the first R580 Windows driver
    below = resolve(describe("GeForce RTX 3060", "580.70", "wsl"), ["torch"], kb=kb)
    fw = below.frameworks["torch"]
    assert fw.gpu and fw.cuda is not None and fw.cuda.startswith("12.")
    at = resolve(describe("GeForce RTX 3060", "580.88", "wsl"), ["torch"], kb=kb)
    assert at.frameworks["torch"].cuda is not None and at.frameworks["torch"].cuda.startswith("13.")
