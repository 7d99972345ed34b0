"""gpuenv.uv.spawn: uv started with posix_spawn behaves as it did under subprocess.Popen (its
output, status, timeouts, process group, signals and file descriptors), and the `gpuenv`
program starts uv before it imports subprocess."""

from __future__ import annotations

import marshal
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv import cache
from gpuenv.lock import last_request
from gpuenv.lock.pypi import PipRequest
from gpuenv.uv import spawn as spawn_module
from gpuenv.uv.spawn import Spawned, spawn

PY = sys.executable
posix_only = pytest.mark.skipif(not hasattr(os, "posix_spawnp"), reason="no posix_spawn here")


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@posix_only
def test_output_and_status_come_back_as_text() -> None:
    code = "import sys; sys.stdout.write('out\\r\\nline'); sys.stderr.write('err'); sys.exit(3)"
    child = spawn([PY, "-c", code])
    assert isinstance(child, Spawned)
    assert child.communicate(timeout=30) == ("out\nline", "err")
    assert child.returncode == 3 and child.poll() == 3


@posix_only
def test_a_bare_name_is_looked_for_on_path_as_popen_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "bin" / "fake-uv"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    assert spawn(["fake-uv"]).communicate(timeout=30)[0] == "found\n"


@posix_only
def test_bytes_that_are_not_utf8_are_shown_not_fatal() -> None:
    child = spawn([PY, "-c", "import sys; sys.stdout.buffer.write(b'a\\xffb')"])
    assert child.communicate(timeout=30)[0] == "a\ufffdb"


@posix_only
def test_a_signal_ends_it_with_the_signal_s_negative_number() -> None:
    child = spawn([PY, "-c", "import time; time.sleep(60)"])
    assert child.poll() is None
    child.kill()
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    child.kill()  # ended and reaped: nothing to do


@posix_only
def test_a_child_reaped_by_the_system_ends_as_under_popen() -> None:
    """With SIGCHLD ignored (a parent that set it so) the kernel reaps children itself: the
    status is lost, and the child counts as ended with 0, as Popen has it."""
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        child = spawn([PY, "-c", "print('done')"])
        assert child.communicate(timeout=30) == ("done\n", "")
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert child.returncode == 0


@posix_only
def test_a_timeout_raises_and_the_next_call_goes_on_with_all_the_output() -> None:
    code = "import sys, time; print('before', flush=True); time.sleep(60)"
    child = spawn([PY, "-c", code])
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(timeout=1.0)
    child.kill()
    out, _ = child.communicate(timeout=30)
    assert out == "before\n"


@posix_only
def test_a_child_that_closes_its_output_and_lives_on_times_out() -> None:
    """Both pipes at their end is not the end of the child: the wait for it has the same
    deadline."""
    code = "import os, time; os.close(1); os.close(2); time.sleep(60)"
    child = spawn([PY, "-c", code])
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(timeout=1.0)
    child.kill()
    assert child.communicate(timeout=30) == ("", "")


@posix_only
def test_stdin_is_empty_and_stderr_can_be_dropped(capfd: pytest.CaptureFixture[str]) -> None:
    """Neither this process's stdin (here, a pipe with something in it) nor its stderr are
    the child's."""
    read, write = os.pipe()
    os.write(write, b"not for the child")
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        code = "import sys; sys.stderr.write('dropped'); print(repr(sys.stdin.read()))"
        child = spawn([PY, "-c", code], stderr=False)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)
    assert child.communicate(timeout=30) == ("''\n", "")
    assert "dropped" not in capfd.readouterr().err


@posix_only
def test_a_new_session_is_a_process_group_of_its_own() -> None:
    code = "import os; print(os.getpgid(0) == os.getpid(), os.getsid(0) == os.getpid())"
    assert spawn([PY, "-c", code], new_session=True).communicate(timeout=30)[0] == "True True\n"
    assert spawn([PY, "-c", code]).communicate(timeout=30)[0] == "False False\n"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
@posix_only
def test_signals_python_ignores_are_the_child_s_default_again() -> None:
    """Python ignores SIGPIPE and SIGXFSZ; pyenv's shims (shell scripts uv runs) must not
    inherit that, as they did not under Popen."""
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # the premise
    child = spawn(["/bin/sh", "-c", "grep SigIgn /proc/self/status"])
    ignored = int(child.communicate(timeout=30)[0].split()[1], 16)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (sig - 1)), sig


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="Linux's /proc")
@posix_only
def test_no_descriptor_is_left_open_here_or_handed_to_the_child() -> None:
    """As Popen's close_fds: a descriptor this process would hand on (one a shell or Ansible
    passed it) is not the child's."""
    before = _fds()
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        child = spawn([PY, "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"])
    finally:
        os.close(read)
        os.close(write)
    out, _ = child.communicate(timeout=30)
    assert out.strip() == "['0', '1', '2', '3']"  # 3: listdir's own
    assert _fds() == before


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="Linux's /proc")
@posix_only
def test_a_program_that_is_not_there_raises_and_leaks_nothing(tmp_path: Path) -> None:
    before = _fds()
    with pytest.raises(FileNotFoundError):
        spawn([str(tmp_path / "no-uv"), "--version"])
    assert _fds() == before


@pytest.mark.parametrize("posix", [True, False], ids=["posix_spawn", "popen"])
def test_the_child_gets_the_environment_it_is_given(
    monkeypatch: pytest.MonkeyPatch, posix: bool
) -> None:
    if not posix:
        monkeypatch.delattr(spawn_module.os, "posix_spawnp", raising=False)
    elif not hasattr(os, "posix_spawnp"):
        pytest.skip("no posix_spawn here")
    env = {**os.environ, "GPUENV_SPAWN_TEST": "given"}
    code = "import os; print(os.environ.get('GPUENV_SPAWN_TEST'))"
    assert spawn([PY, "-c", code], env=env).communicate(timeout=30)[0] == "given\n"
    assert spawn([PY, "-c", code]).communicate(timeout=30)[0] == "None\n"


def test_without_posix_spawn_it_is_popen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no posix_spawn: Popen, with the same pipes and text."""
    monkeypatch.delattr(spawn_module.os, "posix_spawnp", raising=False)
    code = "import sys; sys.stdout.write('out'); sys.stderr.write('err')"
    child = spawn([PY, "-c", code], stderr=False)
    assert isinstance(child, subprocess.Popen)
    out, err = child.communicate(timeout=30)
    assert (out, err, child.returncode) == ("out", None, 0)


# What the program's start used to import before a lock's uv started: 15-20 ms together on a
# 2-core VM (subprocess 10-15 alone; typing, json and contextlib bring re, enum, collections)
HEAVY = ("subprocess", "typing", "json", "re", "enum", "contextlib", "collections", "_pickle")


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="Linux's /proc")
@posix_only
def test_a_posix_spawn_without_a_flag_it_needs_falls_back_to_popen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where posix_spawn cannot make a session (older macOS), Popen does, with no pipe left
    behind."""

    def unsupported(*args: object, **kwargs: object) -> int:
        raise NotImplementedError("setsid")

    monkeypatch.setattr(spawn_module.os, "posix_spawnp", unsupported)
    before = _fds()
    child = spawn([PY, "-c", "print('here')"], new_session=True)
    assert isinstance(child, subprocess.Popen)
    assert child.communicate(timeout=30)[0] == "here\n"
    assert _fds() == before


def test_the_program_starts_a_lock_s_uv_before_importing_subprocess(tmp_path: Path) -> None:
    """The point of this module: `gpuenv lock` starts uv on its last request with nothing
    but the program's first modules loaded."""
    # a usage error ends the lock once click reads the line: uv was started before that
    flags = ["lock", "jax", "--no-such-flag"]
    request = PipRequest(
        uv=PY,  # a program that ends at once: only its start is looked at
        project="",
        constraints="",
        options=("-c", "pass"),
        index_args=(),
        cutoff=(),
        exclude_newer=None,
        requirements=("jax==0.10.2",),
        routed=(),
        sources="the default index",
    )
    data = marshal.dumps(last_request._as_data(request))
    cache.write_entry(last_request.KIND, last_request._file(_key_in(tmp_path, flags)), data)
    code = (
        "import sys\n"
        "from gpuenv.uv import spawn\n"
        "start = spawn.spawn\n"
        "def spy(args, **kw):\n"
        f"    loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "    print('loaded before uv:', loaded, file=sys.stderr)\n"
        "    return start(args, **kw)\n"
        "spawn.spawn = spy\n"
        "sys.argv = ['gpuenv', *sys.argv[1:]]\n"
        "from gpuenv._entry import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [PY, "-c", code, *flags], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    seen = [line for line in done.stderr.splitlines() if line.startswith("loaded before uv")]
    # what the interpreter loads by itself (site, a .pth file) is not the program's doing
    own = subprocess.run(
        [PY, "-c", f"import sys; print([m for m in {HEAVY!r} if m in sys.modules])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert seen == [f"loaded before uv: {own}"], done.stderr


def _key_in(folder: Path, argv: list[str]) -> str:
    """last_request's key of a command line run in `folder`."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        return last_request.command_key(argv)
    finally:
        os.chdir(here)
