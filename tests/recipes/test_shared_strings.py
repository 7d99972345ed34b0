"""The parsed knowledge base holds each recurring text once, so its pickle does too (a quarter
less to read and unpickle on every command's start)."""

from __future__ import annotations

import pickle
from pathlib import Path

from gpuenv.recipes.kb_cache import recipes_dir
from gpuenv.recipes.parse import parse_knowledge_base


def _parsed() -> object:
    root = recipes_dir()
    raws = {p.name: p.read_bytes() for p in sorted(Path(root).glob("*.toml"))}
    return parse_knowledge_base(root, raws, "digest")


def test_equal_texts_of_the_rows_are_one_object() -> None:
    kb = _parsed()
    seen: dict[str, int] = {}
    recurring = 0
    for release in kb.frameworks["torch"].releases:  # type: ignore[attr-defined]
        for build in release.builds:
            for text in (*build.platforms, build.variant, build.provenance.source):
                if text in seen:
                    recurring += 1
                    assert id(text) == seen[text], text
                seen.setdefault(text, id(text))
    assert recurring > 500  # the check above looked at many repeats


def test_the_pickle_holds_each_text_once() -> None:
    releases = _parsed().frameworks["torch"].releases  # type: ignore[attr-defined]
    blob = pickle.dumps(releases, protocol=pickle.HIGHEST_PROTOCOL)
    platform = next(iter(releases[0].builds[0].platforms)).encode()
    # pickle's opcode for a short text: 0x8c, its length, its bytes (not inside longer texts)
    assert blob.count(b"\x8c" + bytes([len(platform)]) + platform) == 1
