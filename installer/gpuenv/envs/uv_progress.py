"""uv's own download progress on the user's terminal, while gpuenv still reads what uv said.

uv draws its progress bars only when its stderr is a terminal, and gpuenv needs uv's words (a
hash mismatch, a 404) to explain a failure. So, where gpuenv's own stderr is a terminal (and
not under -q), uv's stderr is a pseudo-terminal the size of the user's: everything uv writes
there is shown as it comes and kept. Anywhere else (a pipe, a log, Windows) uv runs quietly
with its stderr captured, and nothing extra is printed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import BinaryIO, Optional

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|\r")


def shows_progress() -> bool:
    """Whether uv's progress goes to the user's terminal."""
    from gpuenv.output import quiet

    try:
        return os.name == "posix" and not quiet() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


def run_uv(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """`cmd`, its stdout and stderr captured as text (escape sequences removed); on a terminal
    uv's stderr is shown as it runs too. TimeoutExpired past `timeout` (the process killed).
    uv works in `cwd` whatever UV_WORKING_DIR says (fs.workdir.uv_environment)."""
    from gpuenv.fs.workdir import uv_environment

    env = uv_environment(str(cwd))
    if not shows_progress():
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, env=env
        )
    import pty

    master, slave = pty.openpty()
    _same_size(sys.stderr.fileno(), slave)
    try:
        process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, cwd=cwd, env=env
        )
    finally:
        os.close(slave)
    try:
        said = _relay(master, process, time.monotonic() + timeout, sys.stderr.buffer)
    finally:
        os.close(master)
    stdout = process.stdout.read() if process.stdout else b""
    if process.stdout:
        process.stdout.close()
    if said is None:
        raise subprocess.TimeoutExpired(cmd, timeout)
    return subprocess.CompletedProcess(
        cmd,
        process.wait(),
        stdout.decode(errors="replace"),
        _ANSI.sub("", said.decode(errors="replace")),
    )


def _relay(
    master: int, process: subprocess.Popen[bytes], deadline: float, terminal: BinaryIO
) -> Optional[bytes]:
    """Copy what the child writes to its terminal onto ours until it closes it; what it wrote,
    or None when the deadline passed (the child is then killed)."""
    import select

    chunks: list[bytes] = []
    while True:
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            return None
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            if process.poll() is not None and not select.select([master], [], [], 0)[0]:
                break
            continue
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the child's side of the terminal is closed
            break
        if not data:
            break
        chunks.append(data)
        terminal.write(data)
        terminal.flush()
    return b"".join(chunks)


def _same_size(terminal: int, pseudo: int) -> None:
    """The pseudo-terminal as wide as the user's, so uv's bars fit on one line."""
    try:
        import fcntl
        import termios

        size = fcntl.ioctl(terminal, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(pseudo, termios.TIOCSWINSZ, size)
    except OSError:  # not a terminal after all: uv takes its default width
        pass
