"""The request `gpuenv lock` starts uv on before resolving (lock.last_request) names the program
that runs: it is read only from the user's own file, and only in exactly the shape gpuenv writes."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gpuenv.lock import last_request
from localrepos import build_simple_index, build_wheel

FLAGS = ["jax", "--no-gpu", "--os", "windows", "--python", "3.11", "--exclude-newer", "none"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("planted-request")
    wheels = root / "wheels"
    tag = "cp311-cp311-win_amd64"
    built = [
        build_wheel(wheels, "numpy", "1.26.4", tag=tag),
        build_wheel(wheels, "jax", "0.10.2", requires=["jaxlib==0.10.2", "numpy"]),
        build_wheel(wheels, "jaxlib", "0.10.2", tag=tag, requires=["numpy"]),
    ]
    return build_simple_index(root / "index", built)


def lock(folder: Path, index: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "-v", "lock", *FLAGS, "-o", "env.lock.yml"],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull},
        timeout=120,
    )


def stored_request(tmp_path: Path, index: str) -> Path:
    """The request file of this test's command line (after one lock has written it)."""
    assert lock(tmp_path, index).returncode == 0
    files = (Path(os.environ["GPUENV_CACHE_DIR"]) / last_request.KIND).glob("*.marshal")
    return max(files, key=lambda f: f.stat().st_mtime_ns)  # the one this lock just wrote


def plant(path: Path, marker: Path, mode: int) -> None:
    """Replace the request with one whose uv is a script that leaves `marker` behind."""
    script = path.parent.parent / "planted-uv.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    data = marshal.loads(path.read_bytes())
    data["uv"] = str(script)
    path.unlink()
    path.write_bytes(marshal.dumps(data))
    path.chmod(mode)


def test_the_users_own_request_is_started(tmp_path: Path, index: str) -> None:
    path, marker = stored_request(tmp_path, index), tmp_path / "ran"
    plant(path, marker, 0o600)
    result = lock(tmp_path, index)
    assert result.returncode == 0, result.stderr
    assert marker.exists()  # the file was read: the tests below would see a planted one run


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("mode", [0o620, 0o602], ids=["group-writable", "world-writable"])
def test_a_request_others_can_write_never_runs(tmp_path: Path, index: str, mode: int) -> None:
    path, marker = stored_request(tmp_path, index), tmp_path / "ran"
    plant(path, marker, mode)
    result = lock(tmp_path, index)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


def test_a_linked_request_never_runs(tmp_path: Path, index: str) -> None:
    path, marker = stored_request(tmp_path, index), tmp_path / "ran"
    elsewhere = tmp_path / "elsewhere.marshal"
    path.rename(elsewhere)
    plant(elsewhere, marker, 0o600)
    path.symlink_to(elsewhere)
    result = lock(tmp_path, index)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


GOOD: dict[str, Any] = {
    "uv": "/usr/bin/uv",
    "project": "[project]\n",
    "constraints": "",
    "options": ["--quiet"],
    "index_args": [],
    "cutoff": [],
    "exclude_newer": None,
    "requirements": ["jax==0.10.2"],
    "routed": [["torch", "https://example.invalid/whl/cu118"]],
    "sources": "the default index",
}


def test_the_shape_gpuenv_writes_reads_back() -> None:
    assert last_request._valid(GOOD)
    assert last_request._as_data(last_request._request(GOOD)) == GOOD


@pytest.mark.parametrize(
    "change",
    [
        {"uv": ""},
        {"uv": None},
        {"project": 3},
        {"options": "--quiet"},
        {"options": ["--quiet", 1]},
        {"requirements": None},
        {"requirements": []},
        {"routed": [["torch"]]},
        {"routed": [["torch", "a", "b"]]},
        {"routed": "torch"},
        {"routed": [[1, 2]]},
        {"exclude_newer": 20240101},
        {"sources": ["a"]},
    ],
    ids=lambda change: repr(change),
)
def test_any_other_shape_is_no_request(change: dict[str, Any]) -> None:
    assert not last_request._valid({**GOOD, **change})


@pytest.mark.parametrize("data", [[GOOD], "text", None, 3])
def test_not_an_object_is_no_request(data: object) -> None:
    assert not last_request._valid(data)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not marshal",
        b"\xff\xfe",
        marshal.dumps([GOOD]),
        marshal.dumps(GOOD)[:-5],  # cut short
        marshal.dumps(compile("print(1)", "planted", "exec")),  # code, never run nor taken
        marshal.dumps({**GOOD, "options": (("--quiet",),)}),  # tuples are not lists
        b"[\x01\x00\x00\x00" * 3000 + b"N",  # lists in lists, deeper than marshal reads
        b"s\xff\xff\xff\x7f",  # a 2 GB string, announced
    ],
    ids=["empty", "text", "bytes", "a-list", "cut-short", "code", "tuples", "deep", "huge"],
)
def test_a_broken_request_file_is_ignored(tmp_path: Path, index: str, content: bytes) -> None:
    path = stored_request(tmp_path, index)
    path.write_bytes(content)
    result = lock(tmp_path, index)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["lock", "jax", "--no-such-flag"], 2),  # fails before the lock begins
        (["lock", "jax", "--no-gpu", "--os", "linux", "--check", "-o", "none.lock.yml"], 1),
    ],
    ids=["usage-error", "check"],
)
def test_a_run_no_lock_uses_is_stopped(tmp_path: Path, argv: list[str], status: int) -> None:
    """A lock command line that runs no uv (a usage error, --check) leaves no uv running: the
    run started for it is stopped, at the latest as the program exits."""
    cache_dir = Path(os.environ["GPUENV_CACHE_DIR"])
    marker = tmp_path / "still-ran"
    script = tmp_path / "slow-uv.sh"
    script.write_text("")
    script.chmod(0o755)
    folder = cache_dir / last_request.KIND
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)  # the key names the working folder
        key = last_request.command_key(argv)
    finally:
        os.chdir(cwd)
    request = folder / last_request._file(key)
    request.write_bytes(marshal.dumps({**GOOD, "uv": str(script)}))
    request.chmod(0o600)
    started = tmp_path / "started"
    script.write_text(f"#!/bin/sh\ntouch {started}\nsleep 2\ntouch {marker}\n")
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == status, done.stderr
    deadline = time.monotonic() + 5
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the planted run never started: this test would show nothing"
    time.sleep(2.5)
    assert not marker.exists()


def test_only_a_lock_command_line_starts_a_request(tmp_path: Path) -> None:
    argv = ["resolve", "jax", "--no-gpu", "--os", "linux"]
    folder = Path(os.environ["GPUENV_CACHE_DIR"]) / last_request.KIND
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        key = last_request.command_key(argv)
    finally:
        os.chdir(cwd)
    marker = tmp_path / "ran"
    script = tmp_path / "uv.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    request = folder / last_request._file(key)
    request.write_bytes(marshal.dumps({**GOOD, "uv": str(script)}))
    request.chmod(0o600)
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    time.sleep(0.3)
    assert not marker.exists()
