"""A release the index publishes and the knowledge base lacks is said, in one line, by lock and
setup (their availability probe reads the index anyway; resolve stays offline)."""

from __future__ import annotations

from pathlib import Path

from gpuenv.index.config import IndexConfig
from gpuenv.lock.availability import resolve_with_sources
from gpuenv.recipes.fresh import newer_releases
from localrepos import build_simple_index, build_wheel


def test_only_a_newer_final_release_is_news(kb) -> None:
    newest = kb.frameworks["torch"].releases[0].version
    assert newer_releases(kb, ["torch"], {"torch": [newest, f"{newest}+cu130"]}) == []
    assert newer_releases(kb, ["torch"], {"torch": ["99.0.0rc1", "99.0.0.dev1", "1.0"]}) == []
    assert newer_releases(kb, ["torch"], {"torch": ["not a version", "../99"]}) == []
    (line,) = newer_releases(kb, ["torch"], {"torch": ["99.0.0+cu130", "98.1", newest]})
    assert "torch 99.0.0" in line and newest in line and "update the gpuenv checkout" in line
    # one line per framework, only for the frameworks asked for
    assert newer_releases(kb, ["jax"], {"torch": ["99.0.0"]}) == []


def test_lock_and_setup_probe_reports_it(tmp_path: Path, kb, describe, monkeypatch) -> None:
    wheels = tmp_path / "wheels"
    made = [
        build_wheel(wheels, "torch", "99.0.0", tag="cp312-cp312-manylinux_2_28_x86_64"),
        build_wheel(wheels, "torch", "2.5.1", tag="cp312-cp312-manylinux_2_28_x86_64"),
    ]
    index = build_simple_index(tmp_path / "index", made)
    # The PyTorch index is not reachable from tests: keep the probe to the local index.
    monkeypatch.setattr("gpuenv.lock.availability.PROBE_TIMEOUT", 2.0)
    sourced = resolve_with_sources(
        describe("GeForce RTX 4090", "580.95.05", "linux"),
        ["torch"],
        kb,
        IndexConfig(index_url=index),
    )
    news = [n for n in sourced.notes() if "newer than the newest torch" in n]
    assert len(news) == 1 and "torch 99.0.0" in news[0]
    assert sourced.fresh == tuple(news)
