"""A build routed to a find-links page (the JAX CUDA index, jax_cuda_releases.html) locks.

uv reads an index URL as a PEP 503 simple index (URL/project/) unless it is declared flat; the
JAX CUDA wheels are listed on one HTML page, so a route to a `.html` page must be flat.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuenv.index.config import IndexConfig
from gpuenv.lock.errors import UnsatisfiableError
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement
from localrepos import build_simple_index, build_wheel, find_uv
from lockdata import compile_pip

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed")

LABELLED = "0.4.18+cuda12.cudnn89"
TAG = "cp311-cp311-manylinux2014_x86_64"


def _page(root: Path, wheels: list[Path]) -> str:
    page = root / "jax_cuda_releases.html"
    links = "".join(f'<a href="{w.parent.name}/{w.name}">{w.name}</a><br>\n' for w in wheels)
    page.write_text(f"<html><body>\n{links}</body></html>\n", encoding="utf-8")
    return page.as_uri()


@pytest.fixture
def jax_plan(describe, kb):  # type: ignore[no-untyped-def]
    plan = resolve(describe("8.6", "550.54.14", "linux"), ["jax==0.4.18"], kb=kb, python="3.11")
    assert [p.requirement for p in plan.pip][-1] == f"jaxlib=={LABELLED}"
    return plan


def test_a_route_to_a_find_links_page_locks_the_labelled_wheel(jax_plan, tmp_path) -> None:  # type: ignore[no-untyped-def]
    labelled = build_wheel(tmp_path / "jax-wheels", "jaxlib", LABELLED, tag=TAG)
    page = _page(tmp_path, [labelled])
    # the default index has only the plain jaxlib: the labelled one must come from the page
    default = build_simple_index(
        tmp_path / "simple", [build_wheel(tmp_path / "plain", "jaxlib", "0.4.18", tag=TAG)]
    )
    plan = dataclasses.replace(
        jax_plan,
        pip=(PipRequirement(f"jaxlib=={LABELLED}", page),),
        companions=(),
        constraints=(),
    )
    lock = compile_pip(
        plan, indexes=IndexConfig(index_url=default, origin="test"), exclude_newer=None
    )
    (artifact,) = lock.artifacts
    assert artifact.version == LABELLED
    assert artifact.url.endswith(labelled.name)


def test_a_page_without_the_wheel_is_an_error_not_a_fallback(jax_plan, tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = _page(tmp_path, [build_wheel(tmp_path / "jax-wheels", "jaxlib", "0.4.17", tag=TAG)])
    default = build_simple_index(
        tmp_path / "simple",
        [build_wheel(tmp_path / "plain", "jaxlib", LABELLED, tag=TAG)],  # a look-alike elsewhere
    )
    plan = dataclasses.replace(
        jax_plan, pip=(PipRequirement(f"jaxlib=={LABELLED}", page),), companions=(), constraints=()
    )
    with pytest.raises(UnsatisfiableError, match="jaxlib"):
        compile_pip(plan, indexes=IndexConfig(index_url=default, origin="test"), exclude_newer=None)
