"""`gpuenv recipes draft FRAMEWORK VERSION`: rows for a new release, drafted from its artifacts.

What the index and the wheels say, read without installing anything:
- the file list of the default index and of each per-variant index the knowledge base already
  uses for the framework (and any `--index` given): platforms and Python versions per build;
- each build's METADATA (PEP 658 `.metadata` file when the index has one, else the member read
  out of the wheel with range requests): CUDA library pins (`pip_libs`, the cuDNN version);
- `torch/version.py` (CUDA version) and TensorFlow's `tensorflow/python/platform/build_info.py`
  (CUDA, cuDNN, compiled architectures), read with range requests into the wheel;
- for jax, its pure wheel's extras (cuda12, cuda13), the jaxlib pin and files, and each CUDA
  plugin's METADATA ("with-cuda" requirements).

The result is TOML for a maintainer to review: every row says where its facts come from, rows
stay `verified = false`, and what the artifacts cannot tell (torch's architecture list, the
release date) is left as a TODO that the loader refuses until someone fills it in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from packaging.version import InvalidVersion, Version

from gpuenv.index.remote_wheel import RangeReader, read_range
from gpuenv.maint.draft.collect import (
    collect,
    get_small,
    known_variant_indexes,
    list_files,
    merge,
    read_facts,
)
from gpuenv.maint.draft.jax import draft_jax
from gpuenv.maint.draft.model import Build, DraftError, Getter, Lister
from gpuenv.maint.draft.render import render
from gpuenv.recipes.kb import KnowledgeBase

__all__ = ["DraftError", "draft"]


def draft(
    kb: KnowledgeBase,
    framework: str,
    version: str,
    default_index: str,
    *,
    extra_indexes: Sequence[str] = (),
    variant_indexes: Optional[Sequence[str]] = None,
    lister: Optional[Lister] = None,
    getter: Optional[Getter] = None,
    reader: RangeReader = read_range,
) -> str:
    """TOML rows for `framework` `version`, for review. `variant_indexes`: the per-variant
    indexes to read (default: those the knowledge base records for the framework); one that
    does not answer is skipped with a comment in the draft."""
    fw = kb.framework(framework)
    try:
        wanted = Version(version)
    except InvalidVersion as exc:
        raise DraftError(f"{version!r} is not a version") from exc
    if wanted.local:
        raise DraftError(f"{version!r}: give the release's public version, without +local")
    listing = lister or list_files
    fetch = getter or get_small
    if framework == "jax":
        return draft_jax(fw, wanted, default_index, listing, fetch, reader)
    project = fw.name
    builds: list[Build] = list(collect(listing, default_index, project, wanted, None))
    skipped: list[str] = []
    indexes = known_variant_indexes(fw) if variant_indexes is None else list(variant_indexes)
    for index in dict.fromkeys([*indexes, *extra_indexes]):
        try:
            found = collect(listing, index, project, wanted, index)
        except OSError as exc:  # requests' errors are OSErrors: an unreachable variant index
            skipped.append(f"# not read (no answer): {index} ({type(exc).__name__})")
            continue
        builds += [b for b in found if b.local]
    if not builds:
        raise DraftError(f"no {project} {wanted} wheels on the default index or its build indexes")
    facts = {id(b): read_facts(framework, b, fetch, reader) for b in builds}
    builds = merge(builds, facts)
    return "\n".join(skipped) + ("\n" if skipped else "") + render(fw, wanted, builds, facts)
