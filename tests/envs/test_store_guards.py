"""Checks of the store, its removal and the install transaction that no other test would miss
if they were deleted (issue 20's surviving mutants), each written from the behaviour.

Two are second lines of defence that cannot be reached through the first, so the first is
faulted on purpose: `check_removable`'s resolved-inside check (link detection is made to miss a
link, as it would for a reparse point kind it does not know), and `install()`'s own platform
and location checks (called directly, as an API caller that skipped the command's checks
would; the location changes while the lock is awaited, planted by a wrapped lock).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuenv.envs.transaction as transaction
from gpuenv.envs import fs
from gpuenv.envs.errors import CorruptEnvironment, InstallError, StoreInputError
from gpuenv.envs.inventory import remove_environment
from gpuenv.envs.store import (
    METADATA,
    EnvLocation,
    check_name,
    name_problem,
    read_metadata,
    store_root,
)
from gpuenv.lock.load import load_locked
from lockdata import write_valid
from storehelpers import fake_env, fake_metadata, outside_folder, snapshot


def test_removing_an_environment_leaves_one_whose_name_it_prefixes() -> None:
    a = fake_env("a")
    ab = fake_env("ab")
    a_b = fake_env("a-b")  # `a-b-<hash>` splits at its last '-' as `a-b`, never as `a`
    before = {p: snapshot(p) for p in (ab, a_b)}
    remove_environment(EnvLocation.named("a"))
    assert not a.exists() and not (store_root() / "a").exists()
    assert {p: snapshot(p) for p in (ab, a_b)} == before
    assert EnvLocation.named("ab").current() == ab
    assert EnvLocation.named("a-b").current() == a_b


def test_a_leftover_of_a_prefixed_name_is_not_this_environments() -> None:
    fake_env("a")
    ab = EnvLocation.named("ab")
    stray = ab.version_dir("f" * 64)
    stray.mkdir(parents=True)
    remove_environment(EnvLocation.named("a"))
    assert stray.is_dir()


def test_names_are_at_most_64_characters_as_the_message_says() -> None:
    assert name_problem("a" * 64) is None
    problem = name_problem("a" * 65)
    assert problem is not None and "at most 64" in problem
    with pytest.raises(StoreInputError):
        check_name("a" * 65)


def test_metadata_larger_than_any_gpuenv_writes_is_refused_even_when_valid() -> None:
    # valid JSON of every expected type, only padded: the size alone refuses it
    big = {**fake_metadata("big"), "plan": {"note": "x" * (5 * 1024 * 1024)}}
    version = fake_env("big", raw=json.dumps(big).encode())
    with pytest.raises(CorruptEnvironment, match="larger than 4 MiB"):
        read_metadata(version)
    small = fake_env("small", metadata={**fake_metadata("small"), "plan": {"note": "x" * 1000}})
    assert read_metadata(small)["plan"]["note"] == "x" * 1000


def test_remove_link_refuses_a_file_and_a_folder(tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    with pytest.raises(InstallError, match="not a link"):
        fs.remove_link(users / "thesis.tex")
    with pytest.raises(InstallError, match="not a link"):
        fs.remove_link(users)
    assert (users / "thesis.tex").read_text() == "years of work\n"
    link = tmp_path / "link"
    link.symlink_to(users, target_is_directory=True)
    fs.remove_link(link)
    assert not os.path.lexists(link) and (users / "thesis.tex").is_file()


def test_removal_stays_inside_when_link_detection_misses_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    users = outside_folder(tmp_path)
    (root / "sneaky").symlink_to(users, target_is_directory=True)
    # a link kind is_link does not know (an unrecognised Windows reparse point) looks like a
    # real folder to the step-by-step check; the resolved path still says where it leads
    monkeypatch.setattr(fs, "is_real_dir", lambda path: os.path.isdir(path))
    with pytest.raises(InstallError, match="resolves outside"):
        fs.check_removable(root / "sneaky", root)
    with pytest.raises(InstallError):
        fs.remove_tree(root / "sneaky", root)
    assert (users / "thesis.tex").read_text() == "years of work\n"


def _locked(tmp_path: Path, **changes: object):  # type: ignore[no-untyped-def]
    locked = load_locked(write_valid(tmp_path / "x.lock.yml"))
    return dataclasses.replace(locked, **changes) if changes else locked


def test_install_itself_refuses_a_lockfile_for_another_platform(tmp_path: Path) -> None:
    other = "win-64" if os.name != "nt" else "linux-64"
    locked = _locked(tmp_path, platform=other)
    with pytest.raises(InstallError, match=f"is for {other}; this machine is"):
        transaction.install(locked, EnvLocation.named("lab"), [], uv="uv-is-never-run")
    assert not store_root().exists() or not any(store_root().iterdir())


def test_install_checks_the_location_again_once_it_holds_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = _locked(tmp_path)
    location = EnvLocation.named("lab")
    real_exclusive = transaction.exclusive

    @contextlib.contextmanager
    def exclusive_then_planted(*args: object, **kw: object) -> Iterator[None]:
        with real_exclusive(*args, **kw):  # type: ignore[arg-type]
            # while this install waited, someone made a folder of their own at the link's path
            location.link.mkdir()
            (location.link / "data.csv").write_text("theirs\n")
            yield

    built: list[object] = []
    monkeypatch.setattr(transaction, "exclusive", exclusive_then_planted)
    monkeypatch.setattr(transaction, "_build_aside", lambda *a, **k: built.append(a))
    with pytest.raises(StoreInputError, match="is not a gpuenv environment"):
        transaction.install(locked, location, [], uv="uv-is-never-run")
    assert built == []  # nothing was built for a place that is no longer gpuenv's
    assert (location.link / "data.csv").read_text() == "theirs\n"


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_metadata_that_is_no_regular_file_is_refused_without_waiting(kind: str) -> None:
    version = fake_env("odd")
    meta = version / METADATA
    real = meta.read_bytes()
    meta.unlink()
    if kind == "fifo":
        os.mkfifo(meta)  # reading it would block forever
    else:
        (version / "elsewhere.json").write_bytes(real)
        meta.symlink_to(version / "elsewhere.json")
    with pytest.raises(CorruptEnvironment, match="not a gpuenv environment"):
        read_metadata(version)
