"""The probe's short-lived cache of index listings."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.index.simple import fetch_filenames, unknown_host
from gpuenv.lock.availability import _is_missing_project
from gpuenv.lock.probe_cache import (
    GONE_TTL,
    PROBE_TTL,
    HostGone,
    ProjectMissing,
    _path,
    cached_filenames,
    failure_text,
)
from localrepos import build_simple_index, build_wheel, serve_directory

INDEX = "https://mirror.example/simple/"


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


class Index:
    """A fake fetch that counts its calls and answers, misses or fails as told."""

    def __init__(self, answer: list[str] | Exception) -> None:
        self.answer = answer
        self.calls = 0

    def __call__(self, index: str, project: str) -> list[str]:
        self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUENV_PROBE_TTL", raising=False)
    return tmp_path / "cache"


def get(fetch: Index, clock: Clock, index: str = INDEX, project: str = "torch") -> list[str]:
    return cached_filenames(index, project, fetch, _is_missing_project, now=clock)


def test_answers_from_the_cache_until_it_is_too_old() -> None:
    clock, fetch = Clock(), Index(["torch-2.7.1-cp311-cp311-linux_x86_64.whl"])
    assert get(fetch, clock) == fetch.answer
    clock.t += PROBE_TTL - 1
    assert get(fetch, clock) == fetch.answer
    assert fetch.calls == 1
    clock.t += 2
    fetch.answer = ["torch-2.8.0-cp311-cp311-linux_x86_64.whl"]
    assert get(fetch, clock) == fetch.answer
    assert fetch.calls == 2


def test_keyed_by_index_and_project() -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    get(fetch, clock)
    get(fetch, clock, index="https://other.example/simple/")
    get(fetch, clock, project="jax")
    assert fetch.calls == 3


def test_failures_are_not_cached() -> None:
    clock, fetch = Clock(), Index(ConnectionError("refused"))
    for _ in range(2):
        with pytest.raises(ConnectionError):
            get(fetch, clock)
    assert fetch.calls == 2


def test_a_missing_project_is_remembered_as_missing() -> None:
    clock, fetch = Clock(), Index(FileNotFoundError("404"))
    with pytest.raises(FileNotFoundError):
        get(fetch, clock)
    with pytest.raises(ProjectMissing):
        get(fetch, clock)
    assert fetch.calls == 1
    assert _is_missing_project(ProjectMissing("x"))


def test_local_indexes_and_ttl_zero_are_never_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    get(fetch, clock, index="file:///srv/simple/")
    get(fetch, clock, index="file:///srv/simple/")
    assert fetch.calls == 2
    monkeypatch.setenv("GPUENV_PROBE_TTL", "0")
    get(fetch, clock)
    get(fetch, clock)
    assert fetch.calls == 4


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[1, 2]",
        json.dumps({"index": INDEX, "project": "torch", "time": 1e6, "files": [1, 2]}).encode(),
        json.dumps({"index": INDEX, "project": "torch", "time": "now", "files": []}).encode(),
        json.dumps({"index": INDEX, "project": "torch", "time": 2e6, "files": []}).encode(),
        json.dumps({"index": "https://x/", "project": "torch", "time": 1e6, "files": []}).encode(),
    ],
    ids=["garbage", "wrong-type", "bad-files", "bad-time", "from-the-future", "other-index"],
)
def test_a_damaged_cache_entry_is_ignored(content: bytes) -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    path = _path(INDEX, "torch")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert fetch.calls == 1


def test_an_unwritable_cache_only_costs_a_fetch(cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the cache folder should be")
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert fetch.calls == 2


def test_a_real_http_index_is_answered_from_cache_once_gone(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheels", "torch", "2.7.1")
    build_simple_index(tmp_path / "served", [wheel])
    clock = Clock()

    def fetch(index: str, project: str) -> list[str]:
        return fetch_filenames(index, project, timeout=5)

    with serve_directory(tmp_path / "served") as base:
        url = base + "simple/"
        first = cached_filenames(url, "torch", fetch, _is_missing_project, now=clock)
    assert first == [wheel.name]
    # the server is gone: a fresh cached answer still comes back, without a request
    assert cached_filenames(url, "torch", fetch, _is_missing_project, now=clock) == first


# -- a host name that does not exist --------------------------------------------------------


def _resolver_failure(errno: int) -> Exception:
    """What requests raises when the name look-up fails: the resolver's gaierror deep in its
    chain of causes (requests' ConnectionError <- urllib3's error <- socket.gaierror)."""
    gai = socket.gaierror(errno, "resolver says no")
    inner = OSError("Failed to resolve 'index.example.invalid'")
    inner.__cause__ = gai
    outer = ConnectionError("Max retries exceeded with url: /simple/jaxlib/")
    outer.__context__ = inner
    return outer


def gone(fetch: Index, clock: Clock, index: str = INDEX, project: str = "jaxlib") -> list[str]:
    return cached_filenames(
        index, project, fetch, _is_missing_project, now=clock, is_gone=unknown_host
    )


def test_a_host_that_does_not_exist_is_remembered_for_a_minute_with_the_same_words() -> None:
    clock, fetch = Clock(), Index(_resolver_failure(socket.EAI_NONAME))
    with pytest.raises(ConnectionError) as first:
        gone(fetch, clock)
    clock.t += GONE_TTL - 1
    with pytest.raises(HostGone) as again:
        gone(fetch, clock)
    assert fetch.calls == 1
    # the probe's note reads as it did when the index was asked
    assert failure_text(again.value) == failure_text(first.value)
    assert failure_text(first.value).startswith("ConnectionError: Max retries exceeded")
    assert not _is_missing_project(again.value)  # unreachable, not a missing project
    clock.t += 2  # a minute later the host is asked again, and an answer replaces the failure
    fetch.answer = ["jaxlib-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl"]
    assert gone(fetch, clock) == fetch.answer
    assert gone(fetch, clock) == fetch.answer
    assert fetch.calls == 2


@pytest.mark.parametrize(
    "failure",
    [
        _resolver_failure(socket.EAI_AGAIN),  # the resolver could not answer: temporary
        ConnectionError("Connection refused"),
        TimeoutError("read timed out"),
    ],
    ids=["resolver-temporary", "refused", "timeout"],
)
def test_temporary_failures_are_never_remembered(failure: Exception) -> None:
    clock, fetch = Clock(), Index(failure)
    for _ in range(2):
        with pytest.raises(type(failure)):
            gone(fetch, clock)
    assert fetch.calls == 2
    assert not _path(INDEX, "jaxlib").exists()


def test_ttl_zero_remembers_no_missing_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUENV_PROBE_TTL", "0")
    clock, fetch = Clock(), Index(_resolver_failure(socket.EAI_NONAME))
    for _ in range(2):
        with pytest.raises(ConnectionError):
            gone(fetch, clock)
    assert fetch.calls == 2


def _gone_entry(**fields: object) -> bytes:
    base = {"index": INDEX, "project": "jaxlib", "time": 1e6, "files": None, "gone": "E: x"}
    return json.dumps({**base, **fields}).encode()


@pytest.mark.parametrize(
    "content",
    [
        _gone_entry(time=1e6 + 30),  # the clock went backwards since it was written
        _gone_entry(time=True),
        _gone_entry(gone=["not", "text"]),
        _gone_entry(files=["jaxlib-1-py3-none-any.whl"]),  # both an answer and a failure
        _gone_entry(index="https://other.example/simple/"),
        _gone_entry(project="jax"),
        b"\xff\xfe not even text",
        b"",
    ],
    ids=[
        "clock-backwards",
        "bool-time",
        "bad-gone",
        "gone-and-files",
        "other-index",
        "other-project",
        "binary",
        "empty",
    ],
)
def test_a_damaged_or_foreign_failure_entry_is_ignored(content: bytes) -> None:
    clock, fetch = Clock(), Index(["jaxlib-1-py3-none-any.whl"])
    path = _path(INDEX, "jaxlib")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert gone(fetch, clock) == ["jaxlib-1-py3-none-any.whl"]
    assert fetch.calls == 1


def test_the_clock_going_backwards_makes_a_listing_stale_not_fresh_forever() -> None:
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    get(fetch, clock)
    clock.t -= 3600  # NTP stepped the clock back an hour
    get(fetch, clock)
    assert fetch.calls == 2


def test_an_entry_that_is_a_link_is_not_followed_and_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    clock = Clock()
    elsewhere = tmp_path / "planted.json"
    planted = {"index": INDEX, "project": "torch", "time": clock.t, "files": ["evil.whl"]}
    elsewhere.write_text(json.dumps(planted))
    path = _path(INDEX, "torch")
    path.parent.mkdir(parents=True)
    path.symlink_to(elsewhere)
    fetch = Index(["torch-2.7.1-cp311-cp311-linux_x86_64.whl"])
    assert get(fetch, clock) == fetch.answer  # the link's answer was not taken
    assert json.loads(elsewhere.read_text()) == planted  # nor written through
    assert path.is_file() and not path.is_symlink()  # the entry is now gpuenv's own file
    assert get(fetch, clock) == fetch.answer and fetch.calls == 1


def test_an_entry_that_is_a_folder_costs_a_fetch_each_time_and_leaves_no_litter() -> None:
    clock, fetch = Clock(), Index(["torch-1-py3-none-any.whl"])
    folder = _path(INDEX, "torch")
    folder.mkdir(parents=True)
    (folder / "inside").write_text("x")
    assert get(fetch, clock) == fetch.answer
    assert get(fetch, clock) == fetch.answer
    assert fetch.calls == 2
    assert (folder / "inside").read_text() == "x"
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary file left


def test_an_entry_that_is_a_fifo_is_not_waited_on_and_is_replaced() -> None:
    clock, fetch = Clock(), Index(["jax-1-py3-none-any.whl"])
    fifo = _path(INDEX, "jax")
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    assert get(fetch, clock, project="jax") == fetch.answer
    assert stat.S_ISREG(fifo.lstat().st_mode)
    assert get(fetch, clock, project="jax") == fetch.answer and fetch.calls == 1


def test_a_lock_offline_from_a_missing_host_imports_no_http_client_the_second_time(
    cache: Path,
) -> None:
    """The benchmark's case: every index the knowledge base names for jax on linux-64 has a
    host this network cannot resolve. The second probe answers from the cache, in a fresh
    interpreter, without importing requests, with the same notes."""
    code = (
        "import sys\n"
        "from gpuenv.index.config import IndexConfig\n"
        "from gpuenv.lock import availability\n"
        "from gpuenv.recipes import load_knowledge_base\n"
        "from gpuenv.index import simple as simple_index\n"
        "asked = []\n"
        "def fetch(index, project):\n"
        "    asked.append(index)\n"
        "    raise ConnectionError(f'{index}: no such host')\n"
        "availability._fetch = fetch\n"
        "availability.unknown_host = lambda exc: 'no such host' in str(exc)\n"
        f"found = availability.gather(load_knowledge_base(), ['jax'], 'linux-64',"
        f" IndexConfig(index_url={INDEX!r}))\n"
        "print(sorted(found.unreachable))\n"
        "print(len(asked), 'requests' in sys.modules)\n"
    )
    env = {**os.environ, "GPUENV_CACHE_DIR": str(cache)}

    def probe() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.strip().splitlines()

    first, second = probe(), probe()
    assert first[0] == second[0]  # the same notes
    assert first[1] == "3 False"  # jax and jaxlib on the index, jaxlib on the JAX CUDA page
    assert second[1] == "0 False"  # nothing asked again, no HTTP client imported
    assert INDEX in second[0] and "jax_cuda_releases" in second[0]
    assert "no such host" in second[0]


def test_a_host_that_does_not_exist_is_asked_again_after_sixty_seconds() -> None:
    """The minute is the documented figure (README, the module's docstring): just under it
    the failure is remembered, just over it the host is asked again."""
    clock, fetch = Clock(), Index(_resolver_failure(socket.EAI_NONAME))
    with pytest.raises(ConnectionError):
        gone(fetch, clock)
    clock.t += 59.5
    with pytest.raises(HostGone):
        gone(fetch, clock)
    assert fetch.calls == 1
    clock.t += 1.0  # 60.5 s after the failure
    fetch.answer = ["jaxlib-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl"]
    assert gone(fetch, clock) == fetch.answer
    assert fetch.calls == 2


def test_a_listing_of_up_to_16_mib_is_kept_and_read_back() -> None:
    """The bound on a cached entry is 16 MiB: a project listing 15.5 MiB of file names (a
    large project's every file) is answered from the cache; one past 16 MiB is asked again."""
    name = "jaxlib-0.4.{:06}-cp311-cp311-manylinux_2_27_x86_64.whl"
    per = len(json.dumps(name.format(0))) + 2
    files = [name.format(i) for i in range(int(15.5 * (1 << 20)) // per)]
    clock, fetch = Clock(), Index(files)
    assert get(fetch, clock, project="jaxlib") == files
    size = _path(INDEX, "jaxlib").stat().st_size
    assert 15 << 20 < size <= 16 << 20
    assert get(fetch, clock, project="jaxlib") == files
    assert fetch.calls == 1
    more = files + [name.format(i) for i in range(len(files), len(files) + 20_000)]
    clock2, fetch2 = Clock(), Index(more)
    assert get(fetch2, clock2, project="jax") == more
    assert _path(INDEX, "jax").stat().st_size > 16 << 20
    assert get(fetch2, clock2, project="jax") == more
    assert fetch2.calls == 2


@pytest.mark.parametrize("missing", [None, False, "yes"], ids=["absent", "false", "not-a-bool"])
def test_an_entry_with_no_answer_is_asked_again_not_taken_for_a_missing_project(
    missing: object,
) -> None:
    """Only `"missing": true` (without files) remembers that the index has no such project;
    an entry without a listing and without that word holds no answer."""
    clock, fetch = Clock(), Index(["a-1-py3-none-any.whl"])
    path = _path(INDEX, "torch")
    path.parent.mkdir(parents=True)
    entry: dict[str, object] = {"index": INDEX, "project": "torch", "time": 1e6, "files": None}
    if missing is not None:
        entry["missing"] = missing
    path.write_text(json.dumps(entry))
    assert get(fetch, clock) == ["a-1-py3-none-any.whl"]
    assert fetch.calls == 1
