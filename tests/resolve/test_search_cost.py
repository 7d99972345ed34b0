"""The combination search works out each candidate's NVIDIA wheels once, however many
combinations it weighs the candidate in (90 for torch and TensorFlow on an RTX 3090)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import gpuenv.resolve.combine as combine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.resolver import resolve


def test_each_candidates_wheels_are_read_once_per_search(
    describe: Any, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: Counter[int] = Counter()
    named: dict[int, int] = {}  # how many wheels (that parse) each candidate brings
    real = combine.nvidia_wheels

    def counted(cand: Any, kb: Any) -> Any:
        asked[id(cand)] += 1
        wheels = real(cand, kb)
        named[id(cand)] = len(combine._named(wheels))
        return wheels

    libraries: list[str] = []
    real_library_of = KnowledgeBase.library_of

    def library_of(self: KnowledgeBase, package: str) -> Any:
        libraries.append(package)
        return real_library_of(self, package)

    visits: list[int] = []
    real_conflict = combine._conflict

    def visit(chosen: Any, wheels: Any) -> Any:
        visits.append(1)
        return real_conflict(chosen, wheels)

    monkeypatch.setattr(combine, "nvidia_wheels", counted)
    monkeypatch.setattr(combine, "_conflict", visit)
    monkeypatch.setattr(KnowledgeBase, "library_of", library_of)
    machine = describe(gpu="RTX 3090", driver="535.183.01", os_name="linux")
    resolve(machine, ("torch", "tensorflow"), kb=kb)
    assert len(visits) > 10  # the search weighed many combinations: the case is worth checking
    assert asked and max(asked.values()) == 1
    assert len(libraries) == sum(named.values())  # each wheel's library looked up once too
