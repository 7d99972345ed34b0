"""uv's stderr, read while it resolves (lock.uv_picks), is untrusted text: only a pick that uv
also fetched anew, from an http(s) URL without credentials, is read early, and what is read
early answers only for the very URL uv's answer names: parsed, as the check after uv parses a
RECORD, or, where parsing refuses it, as its bytes, for the check to refuse."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Optional

import pytest

from gpuenv.lock import uv_picks
from gpuenv.lock.uv_picks import Picks

pytestmark = pytest.mark.hostile

WHEEL = "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"
URL = f"https://files.example/packages/ab/{WHEEL}"
PICK = f"DEBUG Selecting: numpy==2.4.6 [compatible] ({WHEEL})\n"
FETCH = f"DEBUG No cache entry for: {URL}\n"


class Reader:
    """A RECORD reader that counts what it was asked."""

    def __init__(self, answer: Optional[bytes] = b"numpy/__init__.py,,\n") -> None:
        self.answer = answer
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, url: str) -> Optional[bytes]:
        with self.lock:
            self.asked.append(url)
        return self.answer


def fed(*lines: str, reader: Optional[Reader] = None) -> tuple[Picks, Reader]:
    reader = reader or Reader()
    picks = Picks(reader)
    for line in lines:
        picks.feed(line.encode())
    return picks, reader


PARSED = {"numpy/__init__.py": ""}  # the RECORD above, as parse_record gives it


def answered(picks: Picks, url: str) -> tuple[object, list[str]]:
    """What the lock's check gets for `url`, and what it had to read itself."""
    after: list[str] = []

    def fallback(u: str) -> bytes:
        after.append(u)
        return b"read after uv"

    return picks.reader(fallback)(url), after


@pytest.mark.parametrize("order", [(PICK, FETCH), (FETCH, PICK)])
def test_a_pick_uv_fetched_anew_is_read_once_in_either_order(order: tuple[str, str]) -> None:
    picks, reader = fed(*order, *order)  # uv repeats lines as it goes back and forth
    record, after = answered(picks, URL)
    assert record == PARSED and after == []
    assert reader.asked == [URL]


def test_lines_split_anywhere_across_reads_are_taken_whole() -> None:
    picks = Picks(Reader())
    for byte in (PICK + FETCH).encode():
        picks.feed(bytes([byte]))
    assert answered(picks, URL) == (PARSED, [])


def test_the_metadata_file_names_its_wheel() -> None:
    _, reader = fed(PICK, f"DEBUG No cache entry for: {URL}.metadata\n")
    assert reader.asked == [URL]


@pytest.mark.parametrize(
    "lines",
    [
        [PICK],  # picked, found in uv's cache: gpuenv's cache has it most likely
        [FETCH],  # fetched, never picked (a candidate uv looked at)
        [PICK.replace("Selecting", "Selected"), FETCH],
        [PICK, FETCH.replace("No cache entry", "Found fresh response")],
        [PICK, f"DEBUG No cache entry for: https://user:secret@files.example/ab/{WHEEL}\n"],
        [PICK, f"DEBUG No cache entry for: file:///srv/wheels/{WHEEL}\n"],
        [PICK, f"DEBUG No cache entry for: ftp://files.example/{WHEEL}\n"],
        [PICK, f"DEBUG No cache entry for: {URL}.tar.gz\n"],
        [f"DEBUG Selecting: numpy==2.4.6 [compatible] (../../{WHEEL})\n", FETCH],
        [f"DEBUG Selecting: numpy==2.4.6 [compatible] (x/{WHEEL})\n", FETCH],
        [f"note: DEBUG Selecting: numpy==2.4.6 [compatible] ({WHEEL})\n", FETCH],
        [PICK.rstrip("\n"), FETCH.rstrip("\n")],  # no line end: never a whole line
    ],
)
def test_anything_else_is_read_after_uv(lines: list[str]) -> None:
    picks, reader = fed(*lines)
    assert reader.asked == []
    assert answered(picks, URL) == (b"read after uv", [URL])


def test_an_early_read_answers_only_its_own_url() -> None:
    picks, _ = fed(PICK, FETCH)
    elsewhere = f"https://mirror.example/packages/{WHEEL}"
    assert answered(picks, elsewhere) == (b"read after uv", [elsewhere])


def test_a_failed_early_read_is_read_again_after_uv() -> None:
    class Failing(Reader):
        def __call__(self, url: str) -> Optional[bytes]:
            super().__call__(url)
            raise OSError("connection reset")

    picks, _ = fed(PICK, FETCH, reader=Failing())
    assert answered(picks, URL) == (b"read after uv", [URL])


def test_a_record_parsed_early_is_the_checks_and_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.index import wheel_records
    from isolation import isolate

    isolate(monkeypatch, gpuenv_root=tmp_path / "cache", uv_cache=tmp_path / "uv-cache")
    picks, _ = fed(PICK, FETCH)
    wheel = wheel_records.LockedWheel(WHEEL, URL, "b" * 64)
    after = Reader()
    found, unread = wheel_records.records([wheel], picks.reader(after))
    assert found == {WHEEL: PARSED} and unread == [] and after.asked == []
    assert wheel_records.record_of(wheel, after) == PARSED and after.asked == []  # cached


def test_a_record_parsing_refuses_is_refused_after_uv_as_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuenv.index import wheel_records

    escaped: list[object] = []  # the early read's thread ends cleanly: no traceback on stderr
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    hostile = b"../../etc/cron.d/job,sha256=x,1\n"
    picks, _ = fed(PICK, FETCH, reader=Reader(answer=hostile))
    assert answered(picks, URL) == (hostile, [])  # not parsed early: its bytes
    assert escaped == []
    wheel = wheel_records.LockedWheel(WHEEL, URL, "a" * 64)
    with pytest.raises(wheel_records.WheelRecordError, match="outside the environment"):
        wheel_records.records([wheel], picks.reader(Reader()))


def test_a_wheel_without_record_is_answered_as_the_read_after_would() -> None:
    picks, _ = fed(PICK, FETCH, reader=Reader(answer=None))
    assert answered(picks, URL) == (None, [])


def test_a_line_without_end_is_not_kept_without_bound() -> None:
    picks, reader = fed("DEBUG " + "x" * (4 * uv_picks.MAX_LINE))
    assert len(picks._pending) <= uv_picks.MAX_LINE
    picks.feed(("\n" + PICK + FETCH).encode())  # the stream goes on, line by line
    assert reader.asked == [URL]


def test_at_most_workers_reads_run_at_once() -> None:
    release = threading.Event()
    running: list[int] = []
    peak: list[int] = [0]
    lock = threading.Lock()

    class Slow(Reader):
        def __call__(self, url: str) -> Optional[bytes]:
            with lock:
                running.append(1)
                peak[0] = max(peak[0], len(running))
            release.wait(5)
            with lock:
                running.pop()
            return b""

    picks = Picks(Slow())
    urls = []
    for n in range(3 * uv_picks.WORKERS):
        name = f"p{n}-1.0-py3-none-any.whl"
        urls.append(f"https://files.example/{name}")
        picks.feed(f"DEBUG Selecting: p{n}==1.0 [compatible] ({name})\n".encode())
        picks.feed(f"DEBUG No cache entry for: {urls[-1]}\n".encode())
    threading.Event().wait(0.3)  # let the threads start
    assert peak[0] == uv_picks.WORKERS
    release.set()
    for url in urls:
        assert answered(picks, url) == (b"", [])


def test_uv_is_asked_for_those_lines_and_they_are_left_out_of_its_messages() -> None:
    assert uv_picks.log_environment({})["RUST_LOG"] == uv_picks.LOG_DIRECTIVES
    mine = uv_picks.log_environment({"RUST_LOG": "uv=trace"})["RUST_LOG"]
    assert mine == f"uv=trace,{uv_picks.LOG_DIRECTIVES}"  # the user's own directive kept
    stderr = f"{PICK}error: No solution found\n{FETCH}  hint: try again\n"
    assert uv_picks.without_log(stderr) == "error: No solution found\n  hint: try again\n"
