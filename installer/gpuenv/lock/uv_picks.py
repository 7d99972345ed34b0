"""The wheels uv picks while it resolves, their RECORDs read while it goes on.

After uv's answer a lock reads the RECORD of each locked wheel it has not read before (two
wheels that write one file are refused: index.wheel_records), one or two range requests each,
side by side: 45-75 ms after uv ended, in a cold lock of jax from the default index. uv says,
in debug lines RUST_LOG turns on without -v, which wheel it picks as it resolves (`Selecting:
numpy==2.4.6 [compatible] (numpy-2.4.6-cp311-...whl)`) and which files it asks its index for
that its cache does not hold (`No cache entry for: <URL>`): the wheel's own URL, or that URL and
`.metadata` (PEP 658). A wheel that uv picked and fetched anew has its RECORD read then, from
that URL, and parsed, while uv goes on; one found in uv's cache was most likely read before,
and is left to gpuenv's cache of RECORDs after uv.

What is read early is used only for the very URL uv's answer names, and is the RECORD a read
after uv would fetch from that URL: a pick uv gave up, a read that failed or is not done, or a
line a later uv no longer writes leaves that wheel to be read after uv, as before. Only http(s)
URLs without credentials are read early, at most WORKERS at once, by daemon threads: a read
still under way never holds the command's exit.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Optional, Union
from urllib.parse import unquote, urlsplit

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:  # a lock imports this before its uv run starts: only what it uses
    from gpuenv.index.wheel_records import RecordReader, RecordSource
    from gpuenv.uv.spawn import Process

# the resolver's picks, and the HTTP cache's misses: only these lines
LOG_DIRECTIVES = "uv_resolver::resolver=debug,uv_client::cached_client=debug"
WORKERS = 8  # reads at once, as wheel_records.records after uv
MAX_LINE = 8192  # a longer line is none of those: dropped, not buffered without end
# a pick's file name is joined with the last segment of a fetched URL: nothing else is read
_PICK = re.compile(r"DEBUG Selecting: \S+==\S+ \[[^\]]*\] \((\S+\.whl)\)")
_FETCHED = re.compile(r"DEBUG No cache entry for: (https?://\S+?\.whl)(?:\.metadata)?")


def log_environment(env: dict[str, str]) -> dict[str, str]:
    """`env` for uv with those debug lines on stderr (a user's own RUST_LOG kept)."""
    mine = env.get("RUST_LOG", "").strip()
    return {**env, "RUST_LOG": f"{mine},{LOG_DIRECTIVES}" if mine else LOG_DIRECTIVES}


def without_log(stderr: str) -> str:
    """uv's stderr without the debug lines log_environment asked for (its messages stay)."""
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not line.startswith("DEBUG ")
    )


def wheel_name(url: str) -> str:
    """The file name a wheel's URL ends in."""
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


class _Read:
    """One early read: the URL it read, and the RECORD (None: none, or the read failed)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.done = threading.Event()
        self.record: Optional[bytes] = None
        self.parsed: Optional[dict[str, str]] = None  # the record, parsed (parse_record)
        self.failed = False


class Picks:
    """Fed uv's stderr as it arrives (`feed`), reads with `record` the RECORD of each wheel
    uv picks and fetched anew; `reader` hands those reads to wheel_records."""

    def __init__(self, record: RecordReader) -> None:
        self._record = record
        self._pending = b""
        self._picked: set[str] = set()  # wheel file names
        self._fetched: dict[str, str] = {}  # wheel file name -> its URL
        self._reads: dict[str, _Read] = {}  # wheel file name -> its early read
        self._slots = threading.BoundedSemaphore(WORKERS)

    def feed(self, chunk: bytes) -> None:
        """Some of uv's stderr: each whole line that names a pick or a fetch is taken in."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        if len(self._pending) > MAX_LINE:
            self._pending = b""
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            picked = _PICK.fullmatch(line)
            if picked:
                self._picked.add(picked.group(1))
                self._start(picked.group(1))
                continue
            fetched = _FETCHED.fullmatch(line)
            if fetched and "@" not in urlsplit(fetched.group(1)).netloc:
                name = wheel_name(fetched.group(1))
                self._fetched.setdefault(name, fetched.group(1))
                self._start(name)

    def _start(self, name: str) -> None:
        url = self._fetched.get(name)
        if url is None or name not in self._picked or name in self._reads:
            return
        read = self._reads[name] = _Read(url)
        threading.Thread(target=self._read, args=(read,), name="gpuenv-pick", daemon=True).start()

    def _read(self, read: _Read) -> None:
        from gpuenv.index.wheel_records import WheelRecordError, parse_record

        try:
            with self._slots:
                read.record = self._record(read.url)
        except Exception:  # an early read only saves time: the read after uv says what failed
            read.failed = True
        else:
            # parsed here too, while uv works: after uv, a large wheel's 2,000-3,000 rows took
            # 2-3 ms each (the GIL serialises the parses of all wheels)
            with contextlib.suppress(WheelRecordError):  # parsed again after uv, and refused
                read.parsed = (
                    parse_record(read.record, wheel_name(read.url)) if read.record else None
                )
        finally:
            read.done.set()

    def reader(self, fallback: RecordReader) -> RecordSource:
        """A RecordSource that answers from the early read of that very URL, once done (parsed,
        where that succeeded), and reads any other URL (or one whose early read failed) with
        `fallback`."""

        def read(url: str) -> Union[bytes, dict[str, str], None]:
            early = self._reads.get(wheel_name(url))
            if early is not None and early.url == url:
                early.done.wait()  # bounded: the read's own budget (remote_wheel)
                if not early.failed:
                    return early.parsed if early.parsed is not None else early.record
            return fallback(url)

        return read


class Watched:
    """uv's run read to its end by a thread from the start, its stderr fed to `picks` as it
    arrives (a pipe read only at the end would also hold uv up once full)."""

    def __init__(self, process: Process, picks: Picks, timeout: float) -> None:
        self.process = process
        self._output: Optional[tuple[str, str]] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(
            target=self._run, args=(picks, timeout), name="gpuenv-uv", daemon=True
        )
        self._thread.start()

    def _run(self, picks: Picks, timeout: float) -> None:
        from gpuenv.uv.spawn import Spawned

        try:
            if isinstance(self.process, Spawned):
                self._output = self.process.communicate(timeout, watch=picks.feed)
            else:  # Popen (no posix_spawn): read at the end, and nothing is read early
                self._output = self.process.communicate(timeout=timeout)
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc

    def result(self) -> tuple[int, str]:
        """uv's exit status and stderr (its debug lines left out); what the reading raised
        (subprocess.TimeoutExpired past the timeout) is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._output is not None and self.process.returncode is not None
        return self.process.returncode, without_log(self._output[1])

    def stop(self) -> None:
        """uv stopped if it still runs, and read to its end."""
        self.process.kill()
        self._thread.join()
