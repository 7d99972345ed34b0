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
