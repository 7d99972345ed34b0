"""The parsed knowledge base's cache: found again by the files' stamps while they stay unchanged
(no reading nor hashing of the TOML), read again by content whenever any stamp changes."""

from __future__ import annotations

import os
import pickle
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuenv.recipes import KnowledgeBase, load_knowledge_base
from gpuenv.recipes import kb_cache as loader
from gpuenv.recipes import parse as parser

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.fixture
def parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """A private cache folder, and the folders the loader had to parse, in order."""
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[Path] = []
    parse = parser.parse_knowledge_base

    def spy(root: Path, raws: dict[str, bytes], digest: str) -> KnowledgeBase:
        seen.append(root)
        return parse(root, raws, digest)

    monkeypatch.setattr(parser, "parse_knowledge_base", spy)
    load_knowledge_base.cache_clear()  # each load below is a new run
    yield seen
    load_knowledge_base.cache_clear()


def _copy(tmp_path: Path, name: str = "recipes") -> Path:
    root = tmp_path / name
    shutil.copytree(RECIPES, root)
    return root


def _load(root: Path) -> KnowledgeBase:
    load_knowledge_base.cache_clear()
    return load_knowledge_base(root)


def _stamps(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "recipes" / f"{loader._STAMPS}.pickle"


def test_unchanged_files_are_found_by_their_stamps_without_reading_them(
    tmp_path: Path, parses: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy(tmp_path)
    first = _load(root)
    assert parses == [root]
    assert _stamps(tmp_path).is_file()

    def unread(self: Path) -> bytes:
        raise AssertionError(f"read {self}: its stamp had not changed")

    monkeypatch.setattr(Path, "read_bytes", unread)
    again = _load(root)
    assert parses == [root]
    assert again.digest == first.digest
    assert [g.name for g in again.gpus] == [g.name for g in first.gpus]


@pytest.mark.skipif(sys.platform == "win32", reason="Windows' st_ctime is the creation time")
def test_a_same_size_edit_with_its_old_modification_time_is_still_read(
    tmp_path: Path, parses: list[Path]
) -> None:
    """An edit that keeps the size and puts the old mtime back (`touch -r`, `rsync -t`) still
    changes the file's ctime, which no tool can set."""
    root = _copy(tmp_path)
    before = _load(root)
    gpus = root / "gpus.toml"
    old = gpus.stat()
    text = gpus.read_text(encoding="utf-8")
    name = before.gpus[0].name
    renamed = name[:-1] + ("X" if name[-1] != "X" else "Y")
    gpus.write_text(text.replace(f'name = "{name}"', f'name = "{renamed}"', 1), encoding="utf-8")
    os.utime(gpus, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert gpus.stat().st_size == old.st_size
    assert gpus.stat().st_mtime_ns == old.st_mtime_ns

    after = _load(root)
    assert parses == [root, root]
    assert after.digest != before.digest
    assert after.gpus[0].name == renamed


def test_an_added_or_removed_file_is_read_again(tmp_path: Path, parses: list[Path]) -> None:
    root = _copy(tmp_path)
    full = _load(root)
    (root / "jax.toml").unlink()
    without_jax = _load(root)
    assert "jax" in full.frameworks and "jax" not in without_jax.frameworks
    shutil.copy(RECIPES / "jax.toml", root / "jax.toml")
    assert "jax" in _load(root).frameworks
    # the content came back: its parsed form was still cached under its hash
    assert parses == [root, root]


def test_a_stamp_whose_cached_records_are_gone_or_damaged_is_read_again(
    tmp_path: Path, parses: list[Path]
) -> None:
    root = _copy(tmp_path)
    kb = _load(root)
    cached = tmp_path / "cache" / "recipes" / f"{loader._cache_key(kb.digest)}.pickle"
    cached.write_bytes(b"not a pickle")
    assert _load(root).digest == kb.digest
    cached.unlink()
    assert _load(root).digest == kb.digest
    assert parses == [root, root, root]


@pytest.mark.parametrize(
    "content",
    [
        b"not a pickle",
        pickle.dumps(["a list"]),
        pickle.dumps({"/elsewhere": "not a stamp"}),
    ],
)
def test_a_damaged_stamp_file_is_ignored_and_replaced(
    tmp_path: Path, parses: list[Path], content: bytes
) -> None:
    root = _copy(tmp_path)
    _stamps(tmp_path).parent.mkdir(parents=True)
    _stamps(tmp_path).write_bytes(content)
    kb = _load(root)
    assert parses == [root]
    assert _load(root).digest == kb.digest
    assert parses == [root]  # the rewritten stamp file answered the second run
    with _stamps(tmp_path).open("rb") as fh:
        assert str(root) in pickle.load(fh)


def test_a_stamp_entry_of_another_shape_is_never_trusted(
    tmp_path: Path, parses: list[Path]
) -> None:
    """A stamp pointing at records cached for another key (another loader's record shape, a
    hand-edited file) does not return them."""
    root = _copy(tmp_path)
    kb = _load(root)
    with _stamps(tmp_path).open("rb") as fh:
        known = pickle.load(fh)
    stamp, key = known[str(root)]
    foreign = tmp_path / "cache" / "recipes" / "foreign.pickle"
    shutil.copy(tmp_path / "cache" / "recipes" / f"{key}.pickle", foreign)
    known[str(root)] = (stamp, "foreign")
    _stamps(tmp_path).write_bytes(pickle.dumps(known))
    assert _load(root).digest == kb.digest
    assert parses == [root]  # the content-keyed copy answered, not "foreign"
    with _stamps(tmp_path).open("rb") as fh:
        assert pickle.load(fh)[str(root)][1] == key


def test_only_the_most_recently_stamped_folders_are_remembered(
    tmp_path: Path, parses: list[Path]
) -> None:
    roots = [_copy(tmp_path, f"r{i}") for i in range(loader._STAMPED_ROOTS + 1)]
    for root in roots:
        _load(root)
    assert parses == [roots[0]]  # one content: parsed once, found by its hash for the others

    def remembered() -> list[str]:
        with _stamps(tmp_path).open("rb") as fh:
            return list(pickle.load(fh))

    assert remembered() == [str(r) for r in roots[1:]]
    _load(roots[0])  # forgotten, so stamped again: now the most recent
    assert remembered() == [str(r) for r in (*roots[2:], roots[0])]


def test_the_same_files_in_another_folder_report_that_folder(
    tmp_path: Path, parses: list[Path]
) -> None:
    # two checkouts with equal knowledge bases share one cached parse; each is its own root
    first, second = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    assert _load(first).root == str(first)
    assert _load(second).root == str(second) and parses == [first]  # by content: parsed once
    assert _load(first).root == str(first)  # found by its stamps: still its own folder
    assert _load(second).root == str(second)  # by its stamps too, though the parse was first's
