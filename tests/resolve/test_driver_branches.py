"""Driver branches and the drivers a GPU generation needs.

Expected answers come from NVIDIA's documents, not from recipes/:
- Windows and Linux versions of one branch, as NVIDIA pairs them: CUDA Toolkit release notes
  (table 'CUDA Toolkit and Corresponding Driver Versions': 11.4 GA 470.42.01 / 471.11, 12.0 GA
  525.60.13 / 527.41, 13.1 GA 590.44.01 / 591.34) and the Data Center driver release notes
  (R450: 450.216.04 / 453.94; R535: 535.183.06 / 538.78; R570: 570.133.20 / 572.83). NVIDIA's
  vGPU 8.x notes pair R418 Linux 418.240 with Windows 427.71.
- Last driver branch per architecture: NVIDIA Data Center drivers, 'CUDA Toolkit, Driver, and
  Architecture Matrix': Kepler 3.5/3.7 R470; Maxwell, Pascal, Volta R580.
- Blackwell (10.0, 12.0): first CUDA toolkit 12.8 (same matrix), whose GA driver is >= 570.26
  (Linux) / >= 570.65 (Windows) (release notes table): no older driver runs a Blackwell GPU.
- TensorFlow on WSL2: 'NVIDIA GPU drivers >= 528.33 for WSL on Windows'
  (tensorflow.org/install/pip, software requirements).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuenv.recipes import RecipeError, load_knowledge_base
from gpuenv.resolve import ResolveError, resolve
from gpuenv.resolve.target import build_target

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.mark.parametrize(
    ("version", "branch"),
    [
        ("471.11", 470),  # CUDA 11.4 GA, Windows
        ("472.50", 470),
        ("474.44", 470),
        ("470.256.02", 470),
        ("453.94", 450),
        ("463.15", 460),
        ("527.41", 525),
        ("538.78", 535),
        ("572.83", 570),
        ("580.88", 580),
        ("581.57", 580),
        ("591.34", 590),  # CUDA 13.1 GA, Windows
        ("590.44.01", 590),
        ("427.71", 418),  # R418 Windows (vGPU 8.10)
    ],
)
def test_a_driver_belongs_to_its_branch(kb, describe, version: str, branch: int) -> None:
    target = build_target(describe("GeForce RTX 3090", version, "windows"), kb)
    assert target.driver_branch == branch


def _cannot_run(plan) -> bool:  # type: ignore[no-untyped-def]
    return any("cannot run with it" in w for w in plan.warnings)


@pytest.mark.parametrize(
    ("gpu", "driver", "os_name"),
    [
        ("Tesla K80", "472.50", "windows"),  # R470, Kepler's last branch
        ("Tesla K80", "474.44", "windows"),
        ("Tesla K80", "470.256.02", "linux"),
        ("GeForce GTX 1080", "581.57", "windows"),  # R580, Pascal's last branch
        ("GeForce GTX 1080", "580.95.05", "linux"),
        ("Tesla V100-SXM2-16GB", "582.16", "windows"),
    ],
)
def test_a_driver_of_the_last_branch_is_not_too_new(kb, describe, gpu, driver, os_name) -> None:
    plan = resolve(describe(gpu, driver, os_name), ["torch"], kb=kb)
    assert not _cannot_run(plan), plan.warnings


@pytest.mark.parametrize(
    ("gpu", "driver", "os_name", "last"),
    [
        ("Tesla K80", "495.29.05", "linux", "R470"),
        ("Tesla K80", "496.13", "windows", "R470"),
        ("GeForce GTX 1080", "590.44.01", "linux", "R580"),
        ("GeForce GTX 1080", "591.34", "windows", "R580"),
    ],
)
def test_a_driver_past_the_last_branch_is_flagged(kb, describe, gpu, driver, os_name, last) -> None:
    plan = resolve(describe(gpu, driver, os_name), ["torch"], kb=kb)
    assert _cannot_run(plan) and any(last in w for w in plan.warnings)


def test_kepler_on_an_old_windows_driver_is_told_a_driver_it_can_run(kb, describe) -> None:
    # Any R470 Windows driver (471.xx-474.xx) is within Kepler's last branch: the fix must
    # name a driver, not claim this is the newest stack the GPU can run.
    plan = resolve(describe("Tesla K80", "441.22", "windows"), ["torch"], kb=kb)
    assert any("install NVIDIA driver ≥" in f for f in plan.fixes), plan.fixes
    assert not any("newest stack this GPU can run" in f for f in plan.fixes)


@pytest.mark.parametrize(
    ("driver", "os_name", "floor"),
    [("550.54.14", "linux", "570.26"), ("560.94", "windows", "570.65")],
)
def test_blackwell_below_r570_gets_a_cpu_plan_and_the_driver_fix(
    kb, describe, driver: str, os_name: str, floor: str
) -> None:
    machine = describe("GeForce RTX 5090", driver, os_name)
    plan = resolve(machine, ["torch"], kb=kb)
    assert plan.accelerator == "cpu" and not plan.frameworks["torch"].gpu
    assert any(floor in w and "Blackwell" in w for w in plan.warnings), plan.warnings
    assert any(f"≥ {floor}" in f for f in plan.fixes), plan.fixes
    with pytest.raises(ResolveError, match=floor.replace(".", r"\.")):
        resolve(machine, ["torch"], kb=kb, require_gpu=True)


def test_blackwell_on_r570_runs_cuda_12_8(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 5090", "570.86.16", "linux"), ["torch"], kb=kb)
    assert plan.frameworks["torch"].gpu
    cuda = tuple(int(p) for p in (plan.frameworks["torch"].cuda or "0").split("."))
    assert cuda >= (12, 8)


def test_tensorflow_on_wsl2_needs_the_documented_windows_driver(kb, describe) -> None:
    # 527.41 is CUDA 12's own Windows floor, below TensorFlow's documented 528.33 for WSL2.
    below = resolve(describe("GeForce RTX 3060", "527.41", "wsl"), ["tensorflow"], kb=kb)
    tf = below.frameworks["tensorflow"]
    assert not tf.gpu or int((tf.cuda or "0").split(".")[0]) < 12
    assert any("528.33" in f for f in below.fixes), below.fixes
    at = resolve(describe("GeForce RTX 3060", "528.33", "wsl"), ["tensorflow"], kb=kb)
    assert at.frameworks["tensorflow"].gpu
    assert int((at.frameworks["tensorflow"].cuda or "0").split(".")[0]) == 12
    # torch documents no such floor: its CUDA 12 builds run from CUDA's own 527.41.
    torch_plan = resolve(describe("GeForce RTX 3060", "527.41", "wsl"), ["torch"], kb=kb)
    assert int((torch_plan.frameworks["torch"].cuda or "0").split(".")[0]) == 12


# --- the loader refuses driver facts it cannot use ------------------------------------------


def _copy_with(tmp_path: Path, monkeypatch, old: str, new: str, file: str = "cuda.toml") -> Path:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root, ignore=shutil.ignore_patterns("*.md"))
    text = (root / file).read_text(encoding="utf-8")
    assert old in text
    (root / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            '"12.1"]\nmin_driver_linux = "570.26"',
            '"12.1"]\nmin_driver_linux = "R570"',
            "not a driver version",
        ),
        ('last_driver_branch = "470"', 'last_driver_branch = "471"', "not in \\[drivers\\]"),
        ('"590", "595", "610", "615", "620"]', '"590", "580"]', "oldest first"),
        ('"470", "495"', '"470", "4x5"', "branch numbers"),
        ('"580", "590", "595", "610", "615", "620"]', '"580"]', "the branch after it"),
        ('os = "wsl"', 'os = "../wsl"', "os"),
        ("cuda_major = 12", 'cuda_major = "12"', "integer"),
    ],
)
def test_bad_driver_facts_are_refused(tmp_path, monkeypatch, old, new, message) -> None:
    root = _copy_with(tmp_path, monkeypatch, old, new)
    with pytest.raises(RecipeError, match=message):
        load_knowledge_base(root)


def test_a_gpu_row_must_say_true_or_false(tmp_path, monkeypatch) -> None:
    root = _copy_with(
        tmp_path,
        monkeypatch,
        "confirmed_by_nvidia = false",
        'confirmed_by_nvidia = "no"',
        file="gpus.toml",
    )
    with pytest.raises(RecipeError, match="confirmed_by_nvidia"):
        load_knowledge_base(root)


@pytest.mark.parametrize(
    ("driver", "flagged"), [("472.50", False), ("474.44", False), ("496.13", True)]
)
def test_doctor_reads_windows_drivers_as_branches(kb, describe, driver: str, flagged: bool) -> None:
    from gpuenv.doctor.machine_checks import _driver_findings

    findings = _driver_findings(kb, describe("Tesla K80", driver, "windows"))
    assert any(f.code == "driver-beyond-generation" for f in findings) is flagged
