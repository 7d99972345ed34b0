"""Jetson is its own platform (recipes/jetson.toml).

Sources, as the rows cite them: NVIDIA's blog on CUDA 13.0 for Jetson Thor (one CUDA for SBSA
servers and Thor; "The only exception is Orin (sm_87)"); nvidia-smi on Orin with JetPack 6.2
prints "Driver Version: 540.4.0  CUDA Version: 12.6" (ollama/ollama#9503); on Thor, torch
2.10.0+cu130 from the PyTorch index sees the GPU with driver 580.00 (vllm-project/vllm#34470);
JetPack 5's /proc/driver/nvidia/version names the L4T release (35.3.1, the detect fixture).
Each test uses a pair where the desktop rules give another answer than the Jetson ones.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuenv.machine import MachineError, check_driver_text, l4t_release
from gpuenv.recipes import KnowledgeBase, RecipeError, load_knowledge_base
from gpuenv.recipes.jetson import parse_jetson
from gpuenv.recipes.kb_cache import recipes_dir
from gpuenv.resolve import resolve
from gpuenv.resolve.target import TargetError

JETSON_ONLY = "runs only NVIDIA's Jetson builds"


def _cpu_reason(plan, framework: str = "torch") -> str:  # type: ignore[no-untyped-def]
    return next(w for w in plan.warnings if w.startswith(f"{framework} ") and "CPU" in w)


@pytest.mark.parametrize(
    ("driver", "jetpack"),
    [("540.4.0", "JetPack 6.2"), ("r36.4", "JetPack 6.2"), ("35.3.1", "JetPack 5.1")],
)
def test_orin_never_gets_an_sbsa_cuda_build(kb, describe, driver, jetpack) -> None:  # type: ignore[no-untyped-def]
    # on the desktop rules an sm_87 GPU with driver 540.4.0 got torch cu126 (sm_80 SASS runs on
    # 8.7) through minor-version compatibility: a wheel that cannot run on a Jetson
    plan = resolve(describe("Jetson AGX Orin", driver, "linux", "aarch64"), ["torch"], kb=kb)
    assert plan.accelerator == "cpu" and not plan.frameworks["torch"].gpu
    reason = _cpu_reason(plan)
    assert JETSON_ONLY in reason and jetpack in reason, reason


def test_the_advice_names_where_the_jetpacks_builds_come_from(kb, describe) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("Jetson AGX Orin", "540.4.0", "linux", "aarch64"), ["torch"], kb=kb)
    assert "jp6/cu126" in _cpu_reason(plan)
    plan = resolve(describe("Jetson AGX Xavier", "35.3.1", "linux", "aarch64"), ["torch"], kb=kb)
    reason = _cpu_reason(plan)
    # the Jetson rule decides, not the architecture rule the desktop gives Xavier (sm_72)
    assert JETSON_ONLY in reason and "PyTorch for Jetson" in reason and "no kernels" not in reason


def test_require_gpu_refuses_a_jetson_only_board(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    out = gpuenv_cli(
        "resolve", "torch", "--gpu", "Jetson AGX Orin", "--driver", "540.4.0",
        "--os", "linux", "--arch", "aarch64", "--python", "3.10", "--require-gpu",
    )  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert JETSON_ONLY in out.stderr and "JetPack 6.2" in out.stderr


@pytest.mark.parametrize("driver", ["580.00", "r38.2"])
def test_thor_runs_the_sbsa_wheels_on_its_jetpack_driver(kb, describe, driver) -> None:  # type: ignore[no-untyped-def]
    # numerically 580.00 is older than CUDA 13's desktop floor (580.65.06) and than nothing
    # Blackwell needs; as JetPack 7.0 it provides CUDA 13.0
    plan = resolve(describe("Jetson Thor", driver, "linux", "aarch64"), ["torch"], kb=kb)
    torch = plan.frameworks["torch"]
    assert torch.gpu and (torch.cuda or "").startswith("13."), plan.warnings
    if torch.cuda != "13.0":
        assert any("JetPack 7.0 provides CUDA 13.0" in w for w in plan.warnings), plan.warnings
    assert not any("580.65.06" in w or "predates" in w for w in plan.warnings), plan.warnings


def _kb_with_jetson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> KnowledgeBase:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(recipes_dir(), root, ignore=shutil.ignore_patterns("*.md"))
    path = root / "jetson.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    return load_knowledge_base(root)


def test_a_jetpack_with_an_older_cuda_major_refuses_newer_builds(
    tmp_path, monkeypatch, describe
) -> None:  # type: ignore[no-untyped-def]
    kb = _kb_with_jetson(
        tmp_path, monkeypatch, 'l4t = ["38.2.0", "38.2.1", "38.2.2"]\ncuda = "13.0"',
        'l4t = ["38.2.0", "38.2.1", "38.2.2"]\ncuda = "12.9"',
    )  # fmt: skip
    plan = resolve(describe("Jetson Thor", "580.00", "linux", "aarch64"), ["torch"], kb=kb)
    # no CUDA 12 build carries sm_110 (CUDA 12 called Thor sm_101): the CPU, and why
    assert not plan.frameworks["torch"].gpu
    assert "JetPack 7.0 provides CUDA 12.9; a CUDA 13." in _cpu_reason(plan)


def test_an_unknown_jetson_linux_release_is_said_not_compared(kb, describe) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("Jetson Thor", "r39.9", "linux", "aarch64"), ["torch"], kb=kb)
    assert not plan.frameworks["torch"].gpu
    assert "names no JetPack release recipes/jetson.toml records for Thor" in _cpu_reason(plan)
    # a desktop-style number that no Thor JetPack prints is not compared with desktop floors
    plan = resolve(describe("Jetson Thor", "580.95.05", "linux", "aarch64"), ["torch"], kb=kb)
    assert "names no JetPack release" in _cpu_reason(plan) and "580.65.06" not in _cpu_reason(plan)


def test_a_jetson_gpu_is_planned_on_an_aarch64_board(kb, describe) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TargetError, match="aarch64 board"):
        resolve(describe("Jetson AGX Orin", "540.4.0", "linux", "x86_64"), ["torch"], kb=kb)


def test_an_l4t_release_on_a_desktop_gpu_is_refused(kb, describe) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TargetError, match="Jetson Linux"):
        resolve(describe("GeForce RTX 3090", "r36.4", "linux"), ["torch"], kb=kb)


def test_a_described_jetson_defaults_to_its_board_and_newest_jetpack(describe) -> None:  # type: ignore[no-untyped-def]
    machine = describe("Jetson AGX Orin")
    assert machine.platform == "linux-aarch64"
    assert machine.driver is not None and l4t_release(machine.driver.version) is not None
    assert any("/etc/nv_tegra_release" in n for n in machine.notes)


def test_l4t_releases_and_driver_strings() -> None:
    assert l4t_release("r36.4") == (36, 4) and l4t_release("R35.3.1") == (35, 3, 1)
    assert l4t_release("540.4.0") is None and l4t_release("580.00") is None
    assert check_driver_text(" r36.4 ") == "r36.4"
    for bad in ("r", "r36.4.1.2", "rr36", "36.x"):
        with pytest.raises(MachineError):
            check_driver_text(bad)


def test_a_release_names_its_point_releases_only(kb) -> None:  # type: ignore[no-untyped-def]
    names = lambda text: [j.version for j in kb.jetson.jetpacks_for(text, "Orin")]  # noqa: E731
    assert names("r36.4") == ["6.2"] and names("36.4.3") == ["6.2"]
    assert names("r36.4.9") == [] and names("r36") == ["6.0", "6.2"]
    assert names("540.4.0") == ["6.2"] and names("580.00") == []


_ROW = {"name": "Orin", "compute_capability": "8.7", "cuda_wheels": "jetson", "source": "s"}
_PACK = {
    "version": "6.2", "l4t": ["36.4.3"], "cuda": "12.6", "socs": ["Orin"],
    "builds": "b", "source": "s",
}  # fmt: skip


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"schema": 1, "soc": [{**_ROW, "cuda_wheel": "x"}]}, "unknown key"),
        ({"schema": 1, "soc": [{**_ROW, "cuda_wheels": "desktop"}]}, "cuda_wheels"),
        ({"schema": 1, "soc": [{**_ROW, "compute_capability": 8.7}]}, "compute_capability"),
        ({"schema": 1, "soc": [_ROW], "jetpack": [{**_PACK, "socs": ["Nano"]}]}, "which no"),
        ({"schema": 1, "soc": [_ROW], "jetpack": [{**_PACK, "l4t": ["540.4.0"]}]}, "Jetson Linux"),
        ({"schema": 1, "soc": [_ROW], "jetpack": [{**_PACK, "drivers": ["../x"]}]}, "dotted"),
        ({"schema": 1, "soc": [_ROW], "jetpack": [{**_PACK, "l4t": "36.4.3"}]}, "list"),
        ({"schema": 1, "soc": [{**_ROW, "verified": False}]}, "needs a note"),
        ({"schema": 2}, "schema"),
        ({"schema": 1, "socs": []}, "top-level"),
    ],
)
def test_jetson_toml_is_strict(doc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RecipeError, match=message):
        parse_jetson(doc)
    assert parse_jetson({"schema": 1, "soc": [_ROW], "jetpack": [_PACK]}).soc_for("8.7")


def _thor_case(kb, describe, cuda: str, arch: str):  # type: ignore[no-untyped-def]
    from gpuenv.resolve.gpu_rules import _case
    from gpuenv.resolve.target import build_target

    target = build_target(describe("Jetson Thor", "580.00", "linux", "aarch64"), kb)
    release = next(r for r in kb.framework("torch").releases if r.version == "2.15.0")
    build = next(b for b in release.builds if "linux-aarch64" in b.platforms and b.cuda)
    return _case(kb, target, release, build, cuda, arch, "sm_110")


def test_the_jetpacks_own_cuda_and_newer_minors(kb, describe) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.resolve.jetson_rule import jetpack_cuda
    from gpuenv.resolve.rejection import Rejection

    assert jetpack_cuda(_thor_case(kb, describe, "13.0", "sass")) is None  # its own CUDA
    newer = jetpack_cuda(_thor_case(kb, describe, "13.2", "sass"))
    assert isinstance(newer, str) and "minor-version compatibility" in newer
    # PTX is JIT-compiled by the driver: PTX of a newer CUDA than the JetPack's does not load
    ptx = jetpack_cuda(_thor_case(kb, describe, "13.2", "ptx"))
    assert isinstance(ptx, Rejection) and "JIT-compiling PTX from CUDA 13.2" in ptx.message
    assert jetpack_cuda(_thor_case(kb, describe, "13.0", "ptx")) is None


def test_recipes_check_ties_jetson_rows_to_the_gpus_and_toolkits(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.recipes.check import check

    kb = _kb_with_jetson(
        tmp_path, monkeypatch, 'l4t = ["39.2.0"]\ncuda = "13.2"', 'l4t = ["39.2.0"]\ncuda = "13.9"'
    )
    found = [str(f) for f in check(kb) if "jetson.toml" in f.where]
    assert found == ["warning: jetson.toml jetpack 7.2: CUDA 13.9 has no cuda.toml toolkit row"]
    other = tmp_path / "other"  # load_knowledge_base keeps the last few roots' knowledge bases
    shutil.copytree(tmp_path / "recipes", other)
    text = (other / "jetson.toml").read_text(encoding="utf-8")
    (other / "jetson.toml").write_text(
        text.replace('compute_capability = "11.0"', 'compute_capability = "11.9"'), encoding="utf-8"
    )
    found = [str(f) for f in check(load_knowledge_base(other)) if "soc" in f.where]
    assert found == ["error: jetson.toml soc Thor: no gpus.toml row has compute capability 11.9"]


def test_tensorflow_on_a_jetson_is_told_about_jetson_builds(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow publishes no aarch64 CUDA build at all: the Jetson reason says more than that
    machine = describe("Jetson AGX Orin", "35.3.1", "linux", "aarch64")
    plan = resolve(machine, ["tensorflow"], kb=kb, python="3.8")
    reason = _cpu_reason(plan, "tensorflow")
    assert JETSON_ONLY in reason and "install-tf-jetson-platform" in reason, reason


def test_a_gpu_machines_cpu_build_the_sources_lack_is_why_the_lock_falls_back(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # found by locking for a Jetson with the PyTorch index out of reach: the lock fell back to
    # the default index's older torch and said "it does not agree with the other frameworks'
    # builds", because a GPU machine's CPU candidates kept no rejection to explain it
    from gpuenv.lock.fallback import fallbacks
    from gpuenv.resolve.target import Availability

    machine = describe("Jetson AGX Orin", "540.4.0", "linux", "aarch64")
    ideal = resolve(machine, ["torch"], kb=kb, python="3.10")
    seen = Availability(versions={"torch": {"2.10.0": ("default",)}})
    plan = resolve(machine, ["torch"], kb=kb, python="3.10", available=seen)
    assert plan.frameworks["torch"].version == "2.10.0"
    [fb] = fallbacks(ideal, plan)
    assert "does not agree" not in fb.why and ideal.frameworks["torch"].version in fb.why, fb.why


def test_an_older_cuda_than_the_jetpacks_is_no_compatibility_case(kb, describe) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.resolve.jetson_rule import jetpack_cuda

    # a CUDA 12.8 build on JetPack 7.0 (CUDA 13.0): a newer driver runs older builds natively
    assert jetpack_cuda(_thor_case(kb, describe, "12.8", "sass")) is None


def test_an_assumed_jetpack_is_not_given_a_desktop_driver_floor(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    out = gpuenv_cli(
        "resolve", "torch", "--gpu", "Jetson Thor", "--python", "3.12", "--os", "linux"
    )
    assert out.returncode == 0, out.stderr
    assert "planned for JetPack" in out.stderr and "that JetPack's CUDA" in out.stderr
    assert "580.65.06" not in out.stderr  # CUDA 13's desktop floor
