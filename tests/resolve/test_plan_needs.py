"""Every library a GPU build needs reaches the plan: through its extra (tensorflow[and-cuda]), its
wheel's own Requires-Dist (torch), or a pin of the plan's own (what an install page prescribes).

Source for the case that broke: tensorflow/docs site/en/install/pip.md at 518478ecc (TF 2.12,
2023-03-24) and bf28fbde0 (TF 2.13, 2023-09-28): "conda install -c conda-forge
cudatoolkit=11.8.0" and "pip install nvidia-cudnn-cu11==8.6.0.163"; the 2.12/2.13 wheels
declare no CUDA wheels in their METADATA, so without the pin TensorFlow finds no cuDNN and
quietly runs on the CPU.
"""

from __future__ import annotations

import pytest

from gpuenv.machine import Driver, Gpu, Machine, OSInfo
from gpuenv.recipes import Build, KnowledgeBase, Release
from gpuenv.resolve import ResolveError, resolve

_OS = {
    "linux-64": ("linux", "x86_64"),
    "linux-aarch64": ("linux", "aarch64"),
    "win-64": ("windows", "x86_64"),
}
_DRIVERS = {"linux": ("580.95.05", "470.256.02"), "windows": ("581.57", "472.50")}


def _machine(platform: str, cc: str, driver: str) -> Machine:
    os_name, arch = _OS[platform]
    return Machine(
        os=OSInfo(os_name),
        arch=arch,
        platform=platform,
        driver=Driver(driver),
        gpus=(Gpu(f"GPU sm_{cc.replace('.', '')}", cc, index=0),),
    )


def _gpu_builds(kb: KnowledgeBase) -> list[tuple[Release, Build, str]]:
    out = []
    for fw in kb.frameworks.values():
        for release in fw.releases:
            for build in release.builds:
                if build.is_gpu and build.archs and build.archs.sass:
                    out += [(release, build, p) for p in build.platforms if p in _OS]
    return out


def test_every_gpu_build_gets_what_its_row_says_it_needs(kb) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for release, build, platform in _gpu_builds(kb):
        assert build.archs is not None
        req = f"{release.framework}[{build.variant}]=={release.version}"
        plan = None
        for driver in _DRIVERS[_OS[platform][0]]:
            # a GPU the build has machine code for: its newest SASS target
            machine = _machine(platform, build.archs.sass[-1], driver)
            try:
                plan = resolve(machine, [req], kb=kb)
            except ResolveError:
                continue
            fw = plan.frameworks[release.framework]
            if fw.gpu and fw.variant == build.variant:
                break
            plan = None
        if plan is None:
            continue  # another rule keeps it off this GPU (python, driver); not this test's
        chosen = next(
            b for b in release.builds if b.variant == build.variant and platform in b.platforms
        )
        if chosen is not build:
            continue
        pins = [p.requirement for p in plan.pip]
        if build.extra:
            assert any(f"[{build.extra}]==" in p for p in pins), (req, platform, pins)
        elif not build.pip_libs_declared:
            for lib in build.pip_libs:
                assert lib in pins, (req, platform, lib, pins)
        for lib in build.conda_libs:
            assert lib in plan.conda, (req, platform, lib, plan.conda)
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("version", ["2.13.0", "2.13.1"])
def test_tensorflow_2_12_and_2_13_get_their_cudnn_wheel(kb, version) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(_machine("linux-64", "8.6", "580.95.05"), [f"tensorflow=={version}"], kb=kb)
    assert plan.frameworks["tensorflow"].gpu
    assert "cudatoolkit=11.8.0" in plan.conda
    assert "nvidia-cudnn-cu11==8.6.0.163" in [p.requirement for p in plan.pip]


@pytest.mark.parametrize("version", ["2.12.0", "2.12.1"])
def test_tensorflow_2_12_is_planned_with_jax_free_of_the_cut_off(kb, version) -> None:  # type: ignore[no-untyped-def]
    # tensorflow-2.12.0/2.12.1 METADATA: "Requires-Dist: jax>=0.3.15"; the default index has
    # jax wheels for 0.1.19-0.1.23 and from 0.4.16 (jax-0.4.16-py3-none-any.whl, 2023-09-19) on,
    # sdists only in between: jax alone is locked without the stack's exclude-newer date.
    plan = resolve(_machine("linux-64", "8.6", "580.95.05"), [f"tensorflow=={version}"], kb=kb)
    assert plan.frameworks["tensorflow"].version == version and plan.frameworks["tensorflow"].gpu
    assert plan.exclude_newer and plan.exclude_newer_exempt == ("jax",)
    assert any(r.startswith("jax: locked without the") for r in plan.reasons)
    assert "nvidia-cudnn-cu11==8.6.0.163" in [p.requirement for p in plan.pip]
    assert "exclude_newer_exempt" in plan.to_json()
    newer = resolve(_machine("linux-64", "8.6", "580.95.05"), ["tensorflow==2.13.*"], kb=kb)
    assert newer.exclude_newer_exempt == () and "exclude_newer_exempt" not in newer.to_json()


def test_the_exempt_companion_reaches_uv_as_its_own_cut_off(kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.pypi import pip_request

    plan = resolve(_machine("linux-64", "8.6", "580.95.05"), ["tensorflow==2.12.1"], kb=kb)
    request = pip_request(plan, IndexConfig(), plan.exclude_newer, uv="uv")
    args = list(request.cutoff)
    assert args[:2] == ["--exclude-newer", plan.exclude_newer]
    assert "jax=false" in args and args[args.index("jax=false") - 1] == "--exclude-newer-package"


def test_python_choice_meets_the_companions_wheels(kb) -> None:  # type: ignore[no-untyped-def]
    # The default index: torchvision 0.20.1 (torch 2.5.1's) has a cp312 manylinux x86_64 wheel
    # and no cp313 one; torch 2.5.1 itself has cp313 wheels.
    machine = _machine("linux-64", "8.6", "560.35.03")
    alone = resolve(machine, ["torch==2.5.1"], kb=kb)
    assert alone.python == "3.13"
    both = resolve(machine, ["torch==2.5.1", "torchvision"], kb=kb)
    assert both.python == "3.12"


@pytest.mark.parametrize("value", ["--index=https://evil.example", "jax false", "", "../x"])
def test_an_exempt_project_from_a_file_must_be_a_project_name(kb, value) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.lock.plan_fields import check_plan

    plan = resolve(_machine("linux-64", "8.6", "580.95.05"), ["tensorflow==2.12.1"], kb=kb)
    data = plan.to_json(with_rejected=False)
    assert check_plan(data) is None
    data["exclude_newer_exempt"] = [value]
    assert "exclude_newer_exempt" in str(check_plan(data))
