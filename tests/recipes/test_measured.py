"""Architecture lists measured from the wheels: how rows record it, and what was measured.

The expected lists here were read from the wheels themselves (`gpuenv recipes verify
--artifacts`: the fatbin headers of their CUDA libraries), named with their sha256 as the
default index publishes it; they are not taken from recipes/.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpuenv.recipes.check import check

LEGACY = ["3.5", "3.7", "5.2", "6.0", "6.1", "7.0"]
# wheel -> (sha256, SASS, PTX) read from _pywrap_tensorflow_internal.so's fatbins
TF_READINGS = {
    "1.15.5": (
        "tensorflow_gpu-1.15.5-cp37-cp37m-manylinux2010_x86_64.whl",
        "d0f9afbdc4d3d66870e626462733ac0ea92757b0c2c92279305d13b12a2f84e8",
        LEGACY,
        LEGACY,
    ),
    "2.0.4": (
        "tensorflow_gpu-2.0.4-cp37-cp37m-manylinux2010_x86_64.whl",
        "3fea5a67531394b1d7a5a7817459145ba5c3f98a68095455e29a855fabdc1822",
        LEGACY,
        LEGACY,
    ),
    "2.1.4": (
        "tensorflow-2.1.4-cp37-cp37m-manylinux2010_x86_64.whl",
        "b0a8bbab58bab297ec9cffa2df4dae0d03560acefe89ef6a31db00ce4cce022c",
        LEGACY,
        LEGACY,
    ),
    "2.2.3": (
        "tensorflow-2.2.3-cp38-cp38-manylinux2010_x86_64.whl",
        "ad78577b15990f475070f41fe470f0cea8f7e03b0961e1588269171a2d9e170c",
        LEGACY,
        LEGACY,
    ),
    "2.3.4": (
        "tensorflow-2.3.4-cp38-cp38-manylinux2010_x86_64.whl",
        "348090e6a86eee4b75eef5f72786da440c5fbf7b31bbd189758436025c0a23a9",
        LEGACY,
        ["7.0"],
    ),
    "2.4.4": (
        "tensorflow-2.4.4-cp38-cp38-manylinux2010_x86_64.whl",
        "d130f829e6245fd825262d191d222e31f29d19cf9f7824401bee5e40350bef86",
        ["3.5", "5.0", "6.0", "7.0", "7.5", "8.0"],
        ["8.0"],
    ),
}


def _linux_cuda_archs(kb, version: str):  # type: ignore[no-untyped-def]
    (rel,) = [r for r in kb.framework("tensorflow").releases if r.version == version]
    (build,) = [b for b in rel.builds if b.cuda and "linux-64" in b.platforms]
    return build.archs


@pytest.mark.parametrize("version", sorted(TF_READINGS))
def test_tensorflow_rows_hold_what_the_wheel_holds(kb, version: str) -> None:
    wheel, sha256, sass, ptx = TF_READINGS[version]
    archs = _linux_cuda_archs(kb, version)
    assert list(archs.sass) == sass
    assert list(archs.ptx) == ptx  # TF <= 2.2 embeds PTX for every arch, 2.3 for 7.0 only
    assert f"{wheel} sha256={sha256}" in archs.measured
    assert archs.provenance.verified


def _with_archset(kb, key: str, **changes):  # type: ignore[no-untyped-def]
    tf = kb.framework("tensorflow")
    archset = tf.archsets[key]
    if "verified" in changes:
        prov = dataclasses.replace(archset.provenance, verified=changes.pop("verified"))
        changes["provenance"] = prov
    archsets = {**tf.archsets, key: dataclasses.replace(archset, **changes)}
    frameworks = {**kb.frameworks, "tensorflow": dataclasses.replace(tf, archsets=archsets)}
    return check(dataclasses.replace(kb, frameworks=frameworks))


def _errors(findings) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.message for f in findings if f.level == "error"]


def test_a_measured_archset_must_be_verified(kb) -> None:
    key = _linux_cuda_archs(kb, "2.3.4").name
    assert _errors(_with_archset(kb, key, verified=False)) == [
        "measured from wheels, yet verified = false"
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("tensorflow-2.3.4.whl", "not '<wheel> sha256=<hex>'"),
        ("tensorflow-2.3.4-cp38-cp38-x.whl sha256=" + "A" * 64, "not '<wheel> sha256=<hex>'"),
        ("not_a-wheel.whl sha256=" + "0" * 64, "is not a wheel name"),
        (
            "tensorflow-2.9.3-cp38-cp38-manylinux2010_x86_64.whl sha256=" + "0" * 64,
            "no release 2.9.3 build uses this archset",
        ),
    ],
)
def test_a_measured_entry_names_a_wheel_of_this_row(kb, text: str, message: str) -> None:
    archs = _linux_cuda_archs(kb, "2.3.4")
    errors = _errors(_with_archset(kb, archs.name, measured=(*archs.measured, text)))
    assert len(errors) == 1 and message in errors[0], errors


def test_a_compute_capability_5_0_card_runs_tensorflow_2_2_through_ptx(describe, kb) -> None:
    # GeForce GTX 750 (GM107, 10de:1381) is 5.0: no sm_50 SASS in TF 2.2.3, but the wheel's
    # compute_35 PTX (TF_READINGS above) JIT-compiles for it, on a driver newer than CUDA 10.1's
    from gpuenv.resolve import resolve

    plan = resolve(describe("10de:1381", "470.82.01", "linux"), ["tensorflow==2.2.3"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert plan.accelerator == "cuda" and tf.gpu
    assert any("PTX" in w or "JIT" in w for w in plan.warnings), plan.warnings
