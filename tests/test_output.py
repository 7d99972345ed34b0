"""Output for people: bars that fit an 80-column terminal, -v/-q, one error format."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import textwrap

from installrepos import gpuenv

_DOWNLOADS = textwrap.dedent(
    """
    from gpuenv.commands.progress import Reporter
    r = Reporter()
    for i in range(6):
        name = f"nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64_{i}.whl"
        for done in range(0, 700_000_001, 50_000_000):
            r.progress(name, done, 700_000_000)
    r.done_downloading()
    """
)


def _run_in_terminal(code: str, columns: int) -> str:
    """Run python code with stderr on a pseudo-terminal `columns` wide; what it drew."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_download_bars_fit_an_80_column_terminal() -> None:
    drawn = _run_in_terminal(_DOWNLOADS, 80)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
    rows = [row for line in plain.split("\n") for row in line.split("\r")]
    assert max(len(row.rstrip()) for row in rows) <= 80, max(rows, key=len)
    finished = [line for line in plain.replace("\r\n", "\n").split("\n") if line.strip()]
    assert len(finished) <= 6 * 2  # one finished bar per file, not a line per update


def test_no_bars_and_one_line_per_file_off_a_terminal() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _DOWNLOADS], capture_output=True, text=True, check=True
    )
    lines = out.stderr.splitlines()
    assert len(lines) == 6 and all(line.startswith("  downloading ") for line in lines)


def test_global_quiet_silences_progress_and_verbose_shows_commands(tmp_path: object) -> None:
    quiet = subprocess.run(
        [sys.executable, "-c", "from gpuenv import output; output.set_verbosity(-1);" + _DOWNLOADS],
        capture_output=True,
        text=True,
        check=True,
    )
    assert quiet.stderr == ""
    verbose = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpuenv import output; output.set_verbosity(1);"
            "output.log_command(['uv', 'pip', 'compile', 'a b.in'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert verbose.stderr == "gpuenv: running: uv pip compile 'a b.in'\n"


def test_usage_errors_use_the_one_error_format() -> None:
    bad = gpuenv("resolve", "--bogus")
    assert bad.returncode == 2
    assert bad.stderr.startswith("gpuenv: error: No such option '--bogus'")
    assert "gpuenv resolve --help" in bad.stderr and "Traceback" not in bad.stderr
    both = gpuenv("-v", "-q", "detect")
    assert both.returncode == 2 and "exclude each other" in both.stderr
