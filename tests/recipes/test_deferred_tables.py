"""The pickled knowledge base unpickles a framework, each of its releases, and the GPU tables on
first use: the same values as the knowledge base that was pickled, and only what a command
reads."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.deferred import DeferredMapping, DeferredTuple
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


def _read(releases: object) -> list[int]:
    assert isinstance(releases, DeferredTuple)
    return [i for i, item in enumerate(releases._loaded) if item is not _unread()]


def _unread() -> object:
    from gpuenv.recipes import deferred

    return deferred._UNREAD


def test_a_gpu_plan_reads_the_newest_releases_alone(kb: KnowledgeBase, describe) -> None:  # type: ignore[no-untyped-def]
    loaded = _reloaded(kb)
    machine = describe(gpu="RTX 3090", driver="535.183.01")
    plan = resolve(machine, ("torch", "tensorflow"), kb=loaded, every_rejection=False)
    assert plan == resolve(machine, ("torch", "tensorflow"), kb=kb, every_rejection=False)
    for name in ("torch", "tensorflow"):
        releases = loaded.frameworks[name].releases
        read = _read(releases)
        chosen = [r.version for r in releases].index(plan.frameworks[name].version)
        # the chosen release and the newer ones, in order; not the dozens of older ones
        assert read[: chosen + 1] == list(range(chosen + 1)), name
        assert len(read) < len(releases) / 3, name


@pytest.fixture(scope="module")
def parsed() -> KnowledgeBase:
    """The knowledge base parsed afresh: pickled as the cache pickles it, not in the parts a
    loaded one keeps."""
    import os
    from pathlib import Path

    from gpuenv.recipes.kb_cache import recipes_root
    from gpuenv.recipes.parse import parse_knowledge_base

    folder = recipes_root()
    names = sorted(n for n in os.listdir(folder) if n.endswith(".toml"))
    raws = {n: Path(folder, n).read_bytes() for n in names}
    return parse_knowledge_base(Path(folder), raws, "parsed-afresh")


def test_a_parsed_knowledge_base_is_pickled_in_parts(parsed: KnowledgeBase) -> None:
    loaded = _reloaded(parsed)
    for name in ("torch", "tensorflow"):
        releases = loaded.frameworks[name].releases
        assert isinstance(releases, DeferredTuple) and _read(releases) == [], name
    assert loaded == parsed


def test_the_releases_hold_their_frameworks_very_architecture_sets(parsed: KnowledgeBase) -> None:
    kb = parsed
    loaded = _reloaded(kb)
    for name in ("torch", "tensorflow"):
        framework, parsed = loaded.frameworks[name], kb.frameworks[name]
        sets = {id(archs) for archs in framework.archsets.values()}
        held = [b.archs for r in framework.releases for b in r.builds if b.archs is not None]
        assert held and sum(id(a) in sets for a in held) == sum(
            any(b.archs is a for a in parsed.archsets.values())
            for r in parsed.releases
            for b in r.builds
        )  # shared as parsed: pickled once, not once per release


def test_a_deferred_tuple_reads_as_the_tuple_it_holds(kb: KnowledgeBase) -> None:
    releases = tuple(kb.framework("jax").releases)
    deferred = DeferredTuple.of(releases)
    assert _read(deferred) == [] and len(deferred) == len(releases)
    assert deferred[2] == releases[2] and _read(deferred) == [2]
    assert deferred[-1] == releases[-1]
    assert deferred[1:4] == releases[1:4] and isinstance(deferred[1:4], tuple)
    assert deferred == releases and releases == deferred and deferred != releases[:-1]
    assert deferred[2] is deferred[2]  # unpickled once
    assert deferred != list(releases) and DeferredTuple.of("abc") != "abc"  # as a tuple
    with pytest.raises(IndexError):
        deferred[len(releases)]
    again = pickle.loads(pickle.dumps(deferred))
    assert _read(again) == [] and list(again) == list(releases)
