"""A lock reads the RECORDs of the wheels uv picks while uv resolves (lock.uv_picks), from an
index served over HTTP, with the real uv: what the overlap check then gets is what a read after
uv gets, and uv's messages are what they were."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

from gpuenv.index.config import IndexConfig
from gpuenv.index.remote_wheel import read_record
from gpuenv.index.wheel_records import parse_record
from gpuenv.lock.availability import resolve_with_sources
from gpuenv.lock.errors import LockError
from gpuenv.lock.pypi import PipCompile, PipLock, pip_request
from localrepos import build_simple_index, jax_for_windows, serve_directory


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`full`: the jax the knowledge base picks and what it needs; `lacking`: no jaxlib."""
    root = tmp_path_factory.mktemp("uv-picks")
    wheels = root / "wheels"
    numpy, jax, jaxlib = jax_for_windows(wheels)
    build_simple_index(root / "full", [numpy, jax, jaxlib])
    build_simple_index(root / "lacking", [numpy, jax])
    with serve_directory(root) as base:
        yield {"full": f"{base}full/simple/", "lacking": f"{base}lacking/simple/"}


@pytest.fixture(scope="module")
def uv_writes_picks(served: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip where this uv no longer writes the lines uv_picks reads (its debug output is no
    stable interface): a lock is then as before, only slower, and the suite stays green."""
    import subprocess

    from gpuenv.lock.uv_picks import log_environment
    from gpuenv.uv.binary import find_uv

    work = tmp_path_factory.mktemp("uv-lines")
    (work / "requirements.in").write_text("numpy\n")
    env = log_environment({**os.environ, "UV_CACHE_DIR": str(work / "cache")})
    done = subprocess.run(
        [find_uv(), "pip", "compile", "requirements.in", "--python-platform", "windows",
         "--default-index", served["full"], "--no-build", "--quiet"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if "DEBUG Selecting: " not in done.stderr or "DEBUG No cache entry for: " not in done.stderr:
        pytest.skip("this uv no longer writes the debug lines lock.uv_picks reads")


def run_on(describe: Any, kb: Any, plan_index: str, index: Optional[str] = None) -> PipCompile:
    """uv started on the plan for jax that `plan_index` allows, locking from `index`."""
    config = IndexConfig(index_url=plan_index, origin="test")
    plan = resolve_with_sources(
        describe(os_name="windows"), ["jax"], kb, config, python="3.11", no_gpu=True
    ).plan
    config = IndexConfig(index_url=index or plan_index, origin="test")
    return PipCompile(pip_request(plan, config, None), plan)


def read_after_uv(run: PipCompile, locked: PipLock) -> list[str]:
    """The URLs of the locked wheels whose RECORD the overlap check would read itself, after
    uv; what it gets for each is checked against a fresh read."""
    after: list[str] = []

    def fallback(url: str) -> Optional[bytes]:
        after.append(url)
        return read_record(url)

    reader = run.record_reader(fallback)
    for artifact in locked.artifacts:
        assert artifact.url.startswith("http://127.0.0.1:")
        record, fresh = reader(artifact.url), read_record(artifact.url)
        assert fresh is not None  # read early, it comes parsed: as the check would parse it
        assert record == (
            fresh if artifact.url in after else parse_record(fresh, artifact.filename)
        )
    return after


@pytest.mark.parametrize("rust_log", [None, "off"])
def test_the_wheels_uv_fetches_anew_are_read_while_it_resolves(
    rust_log: Optional[str],
    uv_writes_picks: None,
    served: dict[str, str],
    describe: Any,
    kb: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a user's RUST_LOG=off too: the picks' directives are added after it
    (uv_picks.log_environment)."""
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # empty: uv fetches it all
    if rust_log is not None:
        monkeypatch.setenv("RUST_LOG", rust_log)
    with run_on(describe, kb, served["full"]) as run:
        locked = run.result()
    assert {a.name for a in locked.artifacts} == {"jax", "jaxlib", "numpy"}
    assert read_after_uv(run, locked) == []  # all of them read while uv resolved


def test_wheels_found_in_uv_cache_are_left_to_the_read_after_uv(
    served: dict[str, str], describe: Any, kb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    with run_on(describe, kb, served["full"]) as first:
        first.result()
    with run_on(describe, kb, served["full"]) as again:
        locked = again.result()
    assert sorted(read_after_uv(again, locked)) == sorted(a.url for a in locked.artifacts)


def test_uv_failure_reads_as_before(
    served: dict[str, str], describe: Any, kb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    with (
        run_on(describe, kb, served["full"], served["lacking"]) as run,
        pytest.raises(LockError) as failed,
    ):
        run.result()
    message = str(failed.value)
    assert "jaxlib" in message
    assert "DEBUG" not in message and "Selecting" not in message
