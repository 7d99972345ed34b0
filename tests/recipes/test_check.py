"""`gpuenv recipes check`: rows NVIDIA's name tables do not confirm must say so."""

from __future__ import annotations

import dataclasses

from gpuenv.recipes.check import check


def test_the_shipped_knowledge_base_has_no_errors(kb) -> None:
    assert [f for f in check(kb) if f.level == "error"] == []


def test_an_unconfirmed_row_must_be_marked_unverified_with_a_note(kb) -> None:
    gpus = tuple(
        dataclasses.replace(g, provenance=dataclasses.replace(g.provenance, verified=True))
        if not g.confirmed_by_nvidia
        else g
        for g in kb.gpus
    )
    assert any(not g.confirmed_by_nvidia for g in gpus)
    findings = check(dataclasses.replace(kb, gpus=gpus))
    assert any(f.level == "error" and "confirmed_by_nvidia = false" in f.message for f in findings)


def test_a_name_only_an_unconfirmed_row_carries_is_flagged(kb) -> None:
    lone = dataclasses.replace(kb.gpus[0], name="GeForce Imaginary 1", confirmed_by_nvidia=False)
    findings = check(dataclasses.replace(kb, gpus=(*kb.gpus, lone)))
    assert any("GeForce Imaginary 1" in f.where and "relies on" in f.message for f in findings)


def test_the_shipped_knowledge_base_has_no_warnings(kb) -> None:
    assert [f"{f.where}: {f.message}" for f in check(kb) if f.level == "warning"] == []


def test_every_cudnn_a_build_names_has_a_row(kb) -> None:
    # TensorFlow 1.15 and 2.0 were built against cuDNN 7.4 and CUDA 10.0 (tensorflow.org's tested
    # build configurations); NVIDIA shipped cuDNN 7.4.1.5 for CUDA 9.0, 9.2 and 10.0
    # (gitlab.com/nvidia/cuda commit 2f900088), with Kepler (3.x) and later (cuDNN 7.6.0 support
    # matrix, 7.5.0 rows).
    row = kb.cudnn["7.4"]
    assert {9, 10} <= set(row.cuda_majors)
    assert row.min_compute_capability == "3.0"
    assert not row.provenance.verified and row.provenance.note


def test_a_build_naming_a_cudnn_without_a_row_is_still_flagged(kb) -> None:
    cudnn = {k: v for k, v in kb.cudnn.items() if k != "7.4"}
    findings = check(dataclasses.replace(kb, cudnn=cudnn))
    flagged = {f.where for f in findings if "cuDNN 7.4 has no cudnn.toml row" in f.message}
    assert any("tensorflow 1.15.0" in w for w in flagged)
    assert any("tensorflow 2.0.0" in w for w in flagged)


def test_a_known_broken_row_that_covers_no_build_is_an_error(kb) -> None:
    tf = kb.frameworks["tensorflow"]
    assert tf.broken  # the sm_120 rows (tensorflow/tensorflow#101746 and others)
    stray = dataclasses.replace(tf.broken[0], versions="==0.0.1")
    frameworks = {**kb.frameworks, "tensorflow": dataclasses.replace(tf, broken=(stray,))}
    findings = check(dataclasses.replace(kb, frameworks=frameworks))
    assert any(f.level == "error" and "covers no recorded build" in f.message for f in findings)
