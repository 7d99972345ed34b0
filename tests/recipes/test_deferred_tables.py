"""The pickled knowledge base unpickles a framework's releases and the GPU tables on first use:
the same values as the knowledge base that was pickled, and only what a command reads."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.deferred import DeferredMapping
from gpuenv.resolve import resolve


def _reloaded(kb: KnowledgeBase) -> KnowledgeBase:
    loaded = pickle.loads(pickle.dumps(kb, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(loaded, KnowledgeBase)
    return loaded


def test_every_table_reads_back_as_it_was(kb: KnowledgeBase) -> None:
    loaded = _reloaded(kb)
    for field in dataclasses.fields(KnowledgeBase):
        assert getattr(loaded, field.name) == getattr(kb, field.name), field.name
    assert loaded == kb
    assert list(loaded.frameworks) == list(kb.frameworks)  # order kept: newest file first etc.
    # the name tables hold the very records of `gpus`, as when parsed
    some = kb.gpus[0]
    found = loaded.find_gpu(some.name)
    assert found is not None and any(found is record for record in loaded.gpus)
    assert _reloaded(loaded) == kb  # and once more, from a knowledge base loaded in parts


def test_resolving_torch_reads_torch_alone(kb: KnowledgeBase, describe) -> None:  # type: ignore[no-untyped-def]
    loaded = _reloaded(kb)
    machine = describe(gpu="8.6", driver="550.54.14")
    plan = resolve(machine, ("torch",), kb=loaded)
    assert plan == resolve(machine, ("torch",), kb=kb)
    frameworks = loaded.frameworks
    assert isinstance(frameworks, DeferredMapping)
    assert set(frameworks._loaded) == {"torch"}
    assert "gpus" not in vars(loaded) and "names" not in vars(loaded)


def test_naming_a_gpu_reads_the_gpu_tables(kb: KnowledgeBase) -> None:
    loaded = _reloaded(kb)
    assert loaded.find_gpu("NVIDIA GeForce RTX 3090") == kb.find_gpu("NVIDIA GeForce RTX 3090")
    assert "gpus" in vars(loaded) and "names" in vars(loaded)


def test_unknown_names_stay_unknown(kb: KnowledgeBase) -> None:
    loaded = _reloaded(kb)
    with pytest.raises(KeyError):
        loaded.frameworks["caffe"]
    assert "caffe" not in loaded.frameworks and len(loaded.frameworks) == len(kb.frameworks)
    with pytest.raises(AttributeError, match="no attribute 'gpu_tables'"):
        loaded.gpu_tables  # noqa: B018
