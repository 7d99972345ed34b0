"""jax[cuda12_pip] builds: the local label belongs to jaxlib, never to jax.

Expected pins come from the jax wheels' own METADATA on the configured index, read 2026-12-01:
jax-0.4.18-py3-none-any.whl has `Requires-Dist: jaxlib ==0.4.18+cuda12.cudnn89 ; extra ==
'cuda12_pip'`, jax-0.4.25-py3-none-any.whl `jaxlib ==0.4.25+cuda12.cudnn89 ; extra ==
'cuda12_pip'`. jax itself is one pure-Python wheel per release with no local label; the labelled
jaxlib wheels are on the JAX CUDA wheel index (a find-links page).
"""

from __future__ import annotations

import json

import pytest

from gpuenv.resolve import ResolveError, resolve
from gpuenv.resolve.target import Availability

LINUX_X86 = {"os_name": "linux", "arch": "x86_64"}
# jax version -> the jaxlib its cuda12_pip extra requires (jax METADATA, see above)
CUDA12_PIP_JAXLIB = {"0.4.18": "0.4.18+cuda12.cudnn89", "0.4.25": "0.4.25+cuda12.cudnn89"}


def _pins(plan):  # type: ignore[no-untyped-def]
    return {p.requirement: p.index for p in plan.pip}


@pytest.mark.parametrize("version", sorted(CUDA12_PIP_JAXLIB))
def test_the_label_is_on_jaxlib_routed_to_the_cuda_index(describe, kb, version) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("8.6", "550.54.14", **LINUX_X86), [f"jax=={version}"], kb=kb)
    pins = _pins(plan)
    assert plan.frameworks["jax"].variant == "cuda12"
    assert pins.get(f"jax[cuda12_pip]=={version}", "absent") is None  # plain, default index
    jaxlib_index = pins.get(f"jaxlib=={CUDA12_PIP_JAXLIB[version]}")
    assert jaxlib_index is not None and jaxlib_index.endswith(".html")
    assert not any(r.startswith("jax[") and "+" in r for r in pins)
    assert len([r for r in pins if r.startswith("jaxlib==")]) == 1


def test_jaxlib_asked_for_is_pinned_once_with_its_label(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("8.6", "550.54.14", **LINUX_X86), ["jax==0.4.18", "jaxlib"], kb=kb)
    assert [r for r in _pins(plan) if r.startswith("jaxlib")] == ["jaxlib==0.4.18+cuda12.cudnn89"]


def test_the_cpu_build_pins_plain_jaxlib_from_the_default_index(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe(None, None, **LINUX_X86), ["jax==0.4.18"], kb=kb)
    assert _pins(plan) == {"jax==0.4.18": None, "jaxlib==0.4.18": None}


def test_availability_is_judged_on_the_labelled_jaxlib(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # The lock found jax 0.4.18 and a CPU jaxlib, but no labelled jaxlib anywhere: the CUDA build
    # cannot be had, so under --require-gpu nothing fits, and the error names the jaxlib.
    machine = describe("8.6", "550.54.14", **LINUX_X86)
    seen = Availability(
        versions={"jax": {"0.4.18": ("default",)}, "jaxlib": {"0.4.18": ("default",)}}
    )
    with pytest.raises(ResolveError, match=r"jaxlib==0\.4\.18\+cuda12\.cudnn89"):
        resolve(machine, ["jax==0.4.18"], kb=kb, require_gpu=True, available=seen)
    # ...and when the JAX index has it, the plan routes jaxlib there
    index = next(
        b.index
        for r in kb.frameworks["jax"].releases
        if r.version == "0.4.18"
        for b in r.builds
        if b.local
    )
    assert index is not None
    found = Availability(
        versions={
            "jax": {"0.4.18": ("default",)},
            "jaxlib": {"0.4.18": ("default",), "0.4.18+cuda12.cudnn89": (index,)},
        }
    )
    plan = resolve(machine, ["jax==0.4.18"], kb=kb, require_gpu=True, available=found)
    assert _pins(plan)["jaxlib==0.4.18+cuda12.cudnn89"] == index


def test_the_cli_prints_the_fixed_pins(gpuenv_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = gpuenv_cli(
        "resolve",
        "jax==0.4.18",
        "--gpu",
        "8.6",
        "--driver",
        "550.54.14",
        "--os",
        "linux",
        "--json",
        env={"GPUENV_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    pins = [p["requirement"] for p in json.loads(result.stdout)["pip"]]
    assert pins == ["jax[cuda12_pip]==0.4.18", "jaxlib==0.4.18+cuda12.cudnn89"]
