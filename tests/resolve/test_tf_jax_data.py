"""TensorFlow and JAX knowledge: every release, what `compute_XY` means, and extras.

Expected answers come from primary sources, not from the knowledge base:
- Release lists: the configured index's file lists for tensorflow and jax (PEP 691 JSON, read
  2026-12-01), final releases only.
- `compute_XY` = sm_XY SASS plus compute_XY PTX: TensorFlow's .bazelrc ("`compute_XY` enables
  PTX embedding in addition to SASS") and cuda_configure.bzl (`--cuda-gpu-arch=sm_XY` plus
  `--cuda-include-ptx=sm_XY`); jax's .bazelrc at every tag ("compute" means both cubin and PTX).
- CUDA of each TF build: build_info.py in the wheels (2.14.1: cuda_version 11.8; 2.15.0 on:
  12.x). CUDA minor-version compatibility floors (CUDA Compatibility guide): 11.x >= 450.80.02,
  12.x >= 525.60.13 on Linux. R470 runs CUDA <= 11.4, R535 CUDA <= 12.2.
- Python 3.6: the last tensorflow release with cp36 wheels is 2.6.2 (2.6.3 has cp37-cp39 only).
- jax extras: setup.py / METADATA at each tag (cuda12 -> jax-cuda12-plugin, cuda13 ->
  jax-cuda13-plugin; cuda12_pip -> jaxlib +cuda12.cudnn89).
"""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from gpuenv.recipes.archs import from_arch_list
from gpuenv.resolve import RequirementError, ResolveError, resolve
from gpuenv.resolve.requirements import parse_requirements

# Final releases on the index, 2026-12-01 (tensorflow 1.15 to 2.21, jax 0.4.13 to 0.12).
TENSORFLOW_ON_INDEX = [
    "1.15.0",
    "1.15.2",
    "1.15.3",
    "1.15.4",
    "1.15.5",
    "2.0.0",
    "2.0.1",
    "2.0.2",
    "2.0.3",
    "2.0.4",
    "2.1.0",
    "2.1.1",
    "2.1.2",
    "2.1.3",
    "2.1.4",
    "2.2.0",
    "2.2.1",
    "2.2.2",
    "2.2.3",
    "2.3.0",
    "2.3.1",
    "2.3.2",
    "2.3.3",
    "2.3.4",
    "2.4.0",
    "2.4.1",
    "2.4.2",
    "2.4.3",
    "2.4.4",
    "2.5.0",
    "2.5.1",
    "2.5.2",
    "2.5.3",
    "2.6.0",
    "2.6.1",
    "2.6.2",
    "2.6.3",
    "2.6.4",
    "2.6.5",
    "2.7.0",
    "2.7.1",
    "2.7.2",
    "2.7.3",
    "2.7.4",
    "2.8.0",
    "2.8.1",
    "2.8.2",
    "2.8.3",
    "2.8.4",
    "2.9.0",
    "2.9.1",
    "2.9.2",
    "2.9.3",
    "2.10.0",
    "2.10.1",
    "2.11.0",
    "2.11.1",
    "2.12.0",
    "2.12.1",
    "2.13.0",
    "2.13.1",
    "2.14.0",
    "2.14.1",
    "2.15.0",
    "2.15.0.post1",
    "2.15.1",
    "2.16.1",
    "2.16.2",
    "2.17.0",
    "2.17.1",
    "2.18.0",
    "2.18.1",
    "2.19.0",
    "2.19.1",
    "2.20.0",
    "2.21.0",
]
JAX_ON_INDEX = [
    "0.4.13",
    "0.4.14",
    "0.4.15",
    "0.4.16",
    "0.4.17",
    "0.4.18",
    "0.4.19",
    "0.4.20",
    "0.4.21",
    "0.4.22",
    "0.4.23",
    "0.4.24",
    "0.4.25",
    "0.4.26",
    "0.4.27",
    "0.4.28",
    "0.4.29",
    "0.4.30",
    "0.4.31",
    "0.4.32",
    "0.4.33",
    "0.4.34",
    "0.4.35",
    "0.4.36",
    "0.4.37",
    "0.4.38",
    "0.5.0",
    "0.5.1",
    "0.5.2",
    "0.5.3",
    "0.6.0",
    "0.6.1",
    "0.6.2",
    "0.7.0",
    "0.7.1",
    "0.7.2",
    "0.8.0",
    "0.8.1",
    "0.8.2",
    "0.8.3",
    "0.9.0",
    "0.9.0.1",
    "0.9.1",
    "0.9.2",
    "0.10.0",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "0.11.1",
    "0.11.2",
    "0.12.0",
    "0.12.0.1",
]

LINUX_X86 = {"os_name": "linux", "arch": "x86_64"}


def versions(kb, framework: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {r.version for r in kb.framework(framework).releases}


@pytest.mark.parametrize(("framework", "expected"), [("tensorflow", TENSORFLOW_ON_INDEX)])
def test_every_tensorflow_release_on_the_index_is_known(kb, framework, expected) -> None:  # type: ignore[no-untyped-def]
    missing = [v for v in expected if v not in versions(kb, framework)]
    assert not missing, f"{framework} releases missing from the knowledge base: {missing}"


def test_every_jax_release_on_the_index_is_known(kb) -> None:  # type: ignore[no-untyped-def]
    missing = [v for v in JAX_ON_INDEX if v not in versions(kb, "jax")]
    assert not missing, f"jax releases missing from the knowledge base: {missing}"


def test_every_new_release_cites_its_wheel_or_tag(kb) -> None:  # type: ignore[no-untyped-def]
    for framework in ("tensorflow", "jax"):
        for release in kb.framework(framework).releases:
            assert release.provenance.source, f"{framework} {release.version} has no source"
            for build in release.builds:
                assert build.provenance.source, f"{framework} {release.version} [{build.variant}]"


def _tf_arch_list(source: str) -> list[str]:
    match = re.search(r"cuda_compute_capabilities \[([^\]]*)\]", source)
    assert match, source
    return [e.strip().strip("'") for e in match.group(1).split(",")]


def test_tensorflow_compute_entries_are_sass_and_ptx(kb) -> None:  # type: ignore[no-untyped-def]
    """Each archset read from build_info.py: compute_XY -> SASS and PTX, sm_XY -> SASS only."""
    checked = 0
    for release in kb.framework("tensorflow").releases:
        for build in release.builds:
            archs = build.archs
            if archs is None or "cuda_compute_capabilities [" not in archs.provenance.source:
                continue
            entries = _tf_arch_list(archs.provenance.source)
            sm, compute = from_arch_list(entries)
            assert set(archs.sass) == set(sm) | set(compute), (release.version, entries)
            assert set(archs.ptx) == set(compute), (release.version, entries)
            checked += 1
    assert checked > 40  # every TF 2.3+ CUDA build cites its build_info.py list


def test_jax_compute_entries_are_sass_and_ptx(kb) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for release in kb.framework("jax").releases:
        for build in release.builds:
            archs = build.archs
            if archs is None:
                continue
            line = re.search(r'COMPUTE_CAPABILITIES=\\?"([^"\\]+)', archs.provenance.note or "")
            assert line, archs.provenance.note
            sm, compute = from_arch_list(line.group(1).split(","))
            assert set(archs.sass) == set(sm) | set(compute)
            assert set(archs.ptx) == set(compute)
            checked += 1
    assert checked > 30


def test_a100_on_r470_runs_tensorflow_2_14_from_its_sass(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # 2.14.1: CUDA 11.8 (build_info.py) with compute_80 = sm_80 SASS; 11.x runs on R470 through
    # minor-version compatibility (floor 450.80.02). 2.15.0 on are CUDA 12.x: floor 525.60.13.
    plan = resolve(describe("A100-SXM4-40GB", "470.82.01", **LINUX_X86), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert tf.gpu and tf.version == "2.14.1"
    assert tf.cuda is not None and tf.cuda.startswith("11.")
    assert not any("PTX" in w for w in plan.warnings)  # machine code, no JIT at start
    assert any("minor-version compatibility" in w for w in plan.warnings)


def test_h100_on_r535_runs_the_newest_tensorflow_from_its_sass(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # Every TF >= 2.16 build lists compute_90 (sm_90 SASS + PTX); CUDA 12.3-12.5 builds run on
    # R535 (CUDA 12.2) through 12.x minor-version compatibility (floor 525.60.13): no PTX JIT.
    plan = resolve(describe("H100 80GB HBM3", "535.104.05", **LINUX_X86), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert tf.gpu and tf.version == TENSORFLOW_ON_INDEX[-1] == "2.21.0"
    assert not any("PTX" in w for w in plan.warnings)


def test_h100_below_the_cuda_12_floor_is_not_planned_on_cuda_12(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # R470 (CUDA 11.4): 2.14.1 (CUDA 11.8, compute_80) has only PTX for sm_90, and JIT of CUDA
    # 11.8 PTX needs the 11.8 driver (>= 520.61.05): no TF GPU build runs; never a 12.x build.
    plan = resolve(describe("H100 80GB HBM3", "470.82.01", **LINUX_X86), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert tf.cuda is None or tf.cuda.startswith("11.")


@pytest.mark.parametrize(("os_name", "arch"), [("linux", "x86_64"), ("macos", "x86_64")])
def test_python_3_6_gets_tensorflow_2_6_2(describe, kb, os_name, arch) -> None:  # type: ignore[no-untyped-def]
    gpu, driver = ("GeForce RTX 2080", "470.82.01") if os_name == "linux" else (None, None)
    machine = describe(gpu, driver, os_name, arch)
    plan = resolve(machine, ["tensorflow"], kb=kb, python="3.6")
    assert plan.python == "3.6"
    assert plan.frameworks["tensorflow"].version == "2.6.2"


@pytest.mark.parametrize(
    ("requirement", "version"),
    [("tensorflow==2.9.1", "2.9.1"), ("tensorflow==2.6.0", "2.6.0"), ("jax==0.4.28", "0.4.28")],
)
def test_patch_releases_resolve(describe, kb, requirement, version) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("A100-SXM4-40GB", "535.104.05", **LINUX_X86), [requirement], kb=kb)
    chosen = next(iter(plan.frameworks.values()))
    assert chosen.version == version and chosen.gpu


def test_tensorflow_1_15_0_is_the_plain_cuda_wheel(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # build_info.py is_cuda_build=True in tensorflow-1.15.0-*.whl, False in tensorflow-1.15.5-*
    # (whose CUDA build is tensorflow-gpu 1.15.5).
    machine = describe("GeForce GTX 1080 Ti", "450.80.02", **LINUX_X86)
    old = resolve(machine, ["tensorflow==1.15.0"], kb=kb)
    new = resolve(machine, ["tensorflow==1.15.5"], kb=kb)
    assert old.frameworks["tensorflow"].gpu and new.frameworks["tensorflow"].gpu
    assert any(p.requirement == "tensorflow==1.15.0" for p in old.pip)
    assert any(p.requirement == "tensorflow-gpu==1.15.5" for p in new.pip)


def test_tensorflow_2_6_0_caps_keras_below_2_7(kb) -> None:  # type: ignore[no-untyped-def]
    # METADATA of tensorflow-2.6.0 says keras~=2.6 (admits 2.7); 2.6.5's says keras<2.7,>=2.6.0.
    release = next(r for r in kb.framework("tensorflow").releases if r.version == "2.6.0")
    assert "keras<2.7" in release.companions


# --- extras ---------------------------------------------------------------------------


def test_jax_cuda12_extra_gets_the_cuda12_plugin_on_a_cuda13_driver(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("H100 80GB HBM3", "580.95.05", **LINUX_X86)
    plain = resolve(machine, ["jax"], kb=kb)
    asked = resolve(machine, ["jax[cuda12]"], kb=kb)
    assert plain.frameworks["jax"].variant == "cuda13"  # the newest CUDA the driver allows
    assert asked.frameworks["jax"].variant == "cuda12"
    assert asked.frameworks["jax"].cuda is not None
    assert asked.frameworks["jax"].cuda.startswith("12.")
    assert any(p.requirement.startswith("jax[cuda12]==") for p in asked.pip)
    assert resolve(machine, ["jax[cuda13]"], kb=kb).frameworks["jax"].variant == "cuda13"


def test_jax_cuda12_pip_spelling_matches_the_old_cuda12_rows(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("A100-SXM4-40GB", "535.104.05", **LINUX_X86)
    plan = resolve(machine, ["jax[cuda12_pip]==0.4.18"], kb=kb)
    assert plan.frameworks["jax"].variant == "cuda12"


def test_jax_cpu_extra_plans_the_cpu_build_on_a_gpu_machine(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("A100-SXM4-40GB", "580.95.05", **LINUX_X86), ["jax[cpu]"], kb=kb)
    assert plan.frameworks["jax"].variant == "cpu" and plan.accelerator == "cpu"


@pytest.mark.parametrize(
    ("gpu", "driver", "why"),
    [
        ("GeForce GTX 1080 Ti", "580.95.05", "sm_61"),  # cuda13 builds start at sm_75
        (None, None, "plan is for the CPU"),  # no GPU: never a silent CPU plan
    ],
)
def test_a_cuda_extra_that_cannot_run_here_is_an_error(describe, kb, gpu, driver, why) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResolveError, match=why):
        resolve(describe(gpu, driver, **LINUX_X86), ["jax[cuda13]"], kb=kb)


def test_a_cuda_extra_below_its_driver_floor_is_an_error(describe, kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResolveError, match=r"525\.60\.13"):
        resolve(describe("A100-SXM4-40GB", "470.82.01", **LINUX_X86), ["jax[cuda12]"], kb=kb)


def test_tensorflow_and_cuda_extra_needs_a_build_that_has_it(describe, kb) -> None:  # type: ignore[no-untyped-def]
    machine = describe("GeForce RTX 3060", "535.104.05", **LINUX_X86)
    plan = resolve(machine, ["tensorflow[and-cuda]"], kb=kb)
    assert Version(plan.frameworks["tensorflow"].version) >= Version("2.14")  # extra since 2.14
    with pytest.raises(ResolveError):
        resolve(machine, ["tensorflow[and-cuda]==2.10.0"], kb=kb)


@pytest.mark.parametrize("text", ["jax[cuda11]", "jax[tpu]", "jax[CUDA14]", "tensorflow[gpu]"])
def test_an_extra_no_build_provides_is_bad_input(describe, kb, text) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RequirementError, match="provides the extra"):
        resolve(describe("A100-SXM4-40GB", "580.95.05", **LINUX_X86), [text], kb=kb)


@pytest.mark.parametrize("text", ["jax[../x]", "jax[cuda12;rm]", "jax[cu da]", "torchvision[x]"])
def test_hostile_extras_are_refused(text) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RequirementError):
        parse_requirements([text])


def test_extras_are_normalised_and_merged() -> None:
    (jax,) = parse_requirements(["jax[CUDA12_pip]>=0.4", "jax<0.5"])
    assert jax.extras == ("cuda12-pip",)
    assert jax.accepts("cuda12", "cuda12_pip") and not jax.accepts("cuda13", "cuda13")


def test_cli_exit_status_for_extras(gpuenv_cli) -> None:  # type: ignore[no-untyped-def]
    machine = ("--gpu", "6.1", "--driver", "580.95.05", "--os", "linux", "--arch", "x86_64")
    bad = gpuenv_cli("resolve", "jax[cuda11]", *machine)
    assert bad.returncode == 2 and "cuda11" in bad.stderr and "Traceback" not in bad.stderr
    infeasible = gpuenv_cli("resolve", "jax[cuda13]", *machine)
    assert infeasible.returncode == 3 and "sm_61" in infeasible.stderr
    assert "Traceback" not in infeasible.stderr


def test_jax_cuda12_0_12_1_is_refused_for_the_plugin_it_lacks(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # jax 0.12.1 (2026-11-18) publishes jax-cuda13-plugin only: its refusal says that, not
    # another release's rejection; pre-Turing GPUs stop at 0.12.0.1 with cuda12
    machine = describe("GeForce RTX 3090", "580.95.05", "linux", "x86_64")
    with pytest.raises(
        ResolveError, match=r"jax 0\.12\.1 has no cuda12 build \(its builds: cpu, cuda13\)"
    ):
        resolve(machine, ["jax[cuda12]==0.12.1"], kb=kb, python="3.12")
    pascal = describe("GeForce GTX 1080 Ti", "580.95.05", "linux", "x86_64")
    jax = resolve(pascal, ["jax"], kb=kb, python="3.12").frameworks["jax"]
    assert (jax.version, jax.variant) == ("0.12.0.1", "cuda12")


def test_jax_plugin_builds_are_read_from_their_wheels(kb) -> None:  # type: ignore[no-untyped-def]
    # The plugin wheels' _versions extension reports the CUDA runtime and cuDNN they were built
    # against (read 2026-12-07; checked on 0.11.0, whose .bazelrc says 12.9/9.8.0 and 13.0/9.12.0):
    # jax_cuda13_plugin-0.12.1 says 13040 (CUDA 13.4), jax_cuda12_plugin-0.11.2 says 91002.
    builds = {
        (r.version, b.variant): b
        for r in kb.framework("jax").releases
        for b in r.builds
        if b.is_gpu and Version(r.version) >= Version("0.5")
    }
    assert builds[("0.12.1", "cuda13")].cuda == "13.4"
    assert builds[("0.11.2", "cuda12")].cudnn == "9.10.2"
    assert builds[("0.11.1", "cuda12")].cudnn == "9.8.0"
    unverified = [k for k, b in builds.items() if not b.provenance.verified]
    assert unverified == []  # every plugin wheel is on the default index, so read
