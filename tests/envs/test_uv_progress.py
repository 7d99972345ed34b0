"""uv's download progress shows on the user's terminal (a pseudo-terminal the size of theirs
relays it), while gpuenv still reads uv's words; off a terminal, or under -q, uv runs quietly
and nothing extra is printed."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuenv import output
from gpuenv.envs import uv_progress

FAKE_UV = (
    "import os, sys\n"
    "tty = os.isatty(2)\n"
    "cols = os.get_terminal_size(2).columns if tty else 0\n"
    "sys.stderr.write(f'\\x1b[2K\\rDownloading torch (tty={tty}, cols={cols})\\n')\n"
    "print('done')\n"
    "sys.exit(3)\n"
)


class _Terminal(io.TextIOWrapper):
    """A stderr that is a real terminal (a pseudo-terminal's far side), like a user's."""


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The far side of a pseudo-terminal, 123 columns wide, as the test's stderr (set again in
    the test: pytest's own capture replaces sys.stderr between a fixture and its test)."""
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 123, 0, 0))
    stream = _Terminal(open(slave, "wb", buffering=0), write_through=True)  # noqa: SIM115
    output.set_verbosity(output.NORMAL)
    yield master, lambda: monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.undo()
    stream.close()
    os.close(master)


def _shown(master: int) -> bytes:
    try:
        return os.read(master, 1 << 16)
    except BlockingIOError:
        return b""


def test_on_a_terminal_uv_draws_its_progress_and_gpuenv_still_reads_it(
    terminal: tuple[int, Callable[[], None]], tmp_path: Path
) -> None:
    master, use = terminal
    use()
    assert uv_progress.shows_progress()
    done = uv_progress.run_uv([sys.executable, "-c", FAKE_UV], tmp_path, timeout=60)
    assert done.returncode == 3 and done.stdout == "done\n"
    assert done.stderr.strip() == "Downloading torch (tty=True, cols=123)"  # escapes removed
    assert b"Downloading torch (tty=True, cols=123)" in _shown(master)  # the user saw it


def test_under_q_or_off_a_terminal_nothing_extra_is_shown(
    terminal: tuple[int, Callable[[], None]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, use = terminal
    use()
    output.set_verbosity(output.QUIET)
    try:
        assert not uv_progress.shows_progress()
        done = uv_progress.run_uv([sys.executable, "-c", FAKE_UV], tmp_path, timeout=60)
    finally:
        output.set_verbosity(output.NORMAL)
    assert "tty=False" in done.stderr and _shown(master) == b""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not uv_progress.shows_progress()


@pytest.mark.parametrize("on_terminal", [True, False], ids=["terminal", "no-terminal"])
def test_uv_is_told_its_work_folder_over_the_users_uv_working_dir(
    terminal: tuple[int, Callable[[], None]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    on_terminal: bool,
) -> None:
    """uv moves to UV_WORKING_DIR before it reads any configuration: the user's (a shared
    /tmp, say) is replaced by the work folder uv runs in, on either path."""
    terminal[1]()
    if not on_terminal:
        output.set_verbosity(output.QUIET)
    monkeypatch.setenv("UV_WORKING_DIR", str(tmp_path / "planted"))
    work = tmp_path / "work"
    work.mkdir()
    try:
        assert uv_progress.shows_progress() is on_terminal
        code = "import os; print(os.environ['UV_WORKING_DIR'])"
        done = uv_progress.run_uv([sys.executable, "-c", code], work, timeout=60)
    finally:
        output.set_verbosity(output.NORMAL)
    assert done.stdout.strip() == str(work)


def test_a_uv_that_hangs_is_stopped_at_the_deadline(
    terminal: tuple[int, Callable[[], None]], tmp_path: Path
) -> None:
    terminal[1]()
    assert uv_progress.shows_progress()
    with pytest.raises(subprocess.TimeoutExpired):
        uv_progress.run_uv(
            [sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, timeout=0.5
        )


def test_install_asks_uv_for_its_bars_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.envs import backends
    from gpuenv.envs.artifacts import Artifact, InstallSource

    seen: list[list[str]] = []

    def fake_run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(backends, "_run", fake_run)
    url = "https://example.invalid/tiny-1.0-py3-none-any.whl"
    wheel = InstallSource(
        Artifact("pip", "tiny", "tiny-1.0-py3-none-any.whl", url, "a" * 64, None), url
    )
    for on_terminal in (True, False):
        monkeypatch.setattr(uv_progress, "shows_progress", lambda on=on_terminal: on)
        backends.install_wheels(tmp_path / "python", [wheel], "uv")
    assert "--quiet" not in seen[0] and "--quiet" in seen[1]


def test_a_stderr_without_isatty_shows_no_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    # a replaced stderr (some embedding tools set a bare object): no progress, no traceback
    monkeypatch.setattr(sys, "stderr", object())
    assert not uv_progress.shows_progress()
