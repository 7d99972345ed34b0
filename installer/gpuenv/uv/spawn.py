"""Starting uv with os.posix_spawn, before `subprocess` is imported.

The `gpuenv` program starts uv first thing (a lock's `uv pip compile`, an install's `uv python
find`: lock.last_request, envs.early_python), and everything before that start delays the whole
command. Importing `subprocess` and calling its Popen took 10-15 ms of it on a 2-core VM;
posix_spawn takes under 1 ms, and `subprocess` is imported later, while uv runs. `Spawned` is
the part of Popen that gpuenv's uv runs use. Where posix_spawn is missing (Windows), Popen.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Mapping
    from typing import Optional, Union

    Process = Union["Spawned", subprocess.Popen[str]]

# uv writes UTF-8 whatever the locale says; a byte that is not UTF-8 is shown, never fatal
ENCODING = "utf-8"
_READ = 1 << 16


class Spawned:
    """A child started by `spawn`: poll, kill, communicate (text, with a timeout), as Popen's."""

    def __init__(self, args: list[str], pid: int, pipes: dict[int, str]) -> None:
        """`pipes`: the read end of each pipe from the child -> "stdout" or "stderr"."""
        self.args = args
        self.pid = pid
        self.returncode: Optional[int] = None
        self._open = dict(pipes)
        self._read: dict[str, list[bytes]] = {name: [] for name in pipes.values()}

    def poll(self) -> Optional[int]:
        """The exit status once the child has ended (a signal's as its negative number)."""
        return self._reap(block=False)

    def kill(self) -> None:
        if self.returncode is None:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                return  # ended: the next poll reaps it

    def communicate(
        self, timeout: Optional[float] = None, watch: Optional[Callable[[bytes], None]] = None
    ) -> tuple[str, str]:
        """Read both pipes to their end and wait for the child, within `timeout` seconds:
        subprocess.TimeoutExpired past it, and a later call goes on where this one stopped.
        Its stdout and stderr ("" for one not piped back); `watch` is given each piece of
        stderr as it arrives."""
        import selectors
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            for fd in self._open:
                selector.register(fd, selectors.EVENT_READ)
            while self._open:
                ready = selector.select(_left(deadline, self.args, timeout))
                for key, _ in ready:
                    chunk = os.read(key.fd, _READ)
                    if chunk:
                        self._read[self._open[key.fd]].append(chunk)
                        if watch is not None and self._open[key.fd] == "stderr":
                            watch(chunk)
                    else:  # the child closed its end
                        selector.unregister(key.fd)
                        os.close(key.fd)
                        del self._open[key.fd]
        while self._reap(block=deadline is None) is None:
            time.sleep(min(0.005, _left(deadline, self.args, timeout)))
        return self._text("stdout"), self._text("stderr")

    def _reap(self, block: bool) -> Optional[int]:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): as Popen
                self.returncode = 0
                return 0
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def _text(self, name: str) -> str:
        text = b"".join(self._read.get(name, ())).decode(ENCODING, "replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")  # as Popen's text mode reads it


def _left(deadline: Optional[float], args: list[str], timeout: Optional[float]) -> float:
    """Seconds to the deadline (a day when there is none); TimeoutExpired when it has passed."""
    if deadline is None:
        return 86400.0
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        import subprocess

        raise subprocess.TimeoutExpired(args, timeout or 0.0)
    return left


def spawn(
    args: list[str],
    *,
    env: Optional[Mapping[str, str]] = None,
    stderr: bool = True,
    new_session: bool = False,
) -> Process:
    """`args` running with stdin from /dev/null, its stdout (and stderr, or
    /dev/null for it) piped back, and no other descriptor of this process; `new_session`: in a
    process group of its own; `env`: its environment (this process's by default). Raises
    OSError when it cannot start, as Popen does."""
    inherited = _inheritable() if hasattr(os, "posix_spawnp") else None
    env = os.environ if env is None else env
    if inherited is None:
        return _popen(args, env, stderr, new_session)
    pipes: dict[int, str] = {}
    ends: list[int] = []  # the child's ends: closed here once it has them
    try:
        # as Popen's close_fds: what this process was handed (a shell's, Ansible's pipes) is
        # not uv's, nor the shims' it runs, which could hold a pipe open past uv's end
        actions: list[tuple[object, ...]] = [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
        for target, name in ((1, "stdout"), (2, "stderr")):
            if name == "stderr" and not stderr:
                actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0))
                continue
            read, write = os.pipe()  # both close-on-exec; dup2 gives the child its own copy
            pipes[read] = name
            ends.append(write)
            actions.append((os.POSIX_SPAWN_DUP2, write, target))
        import _signal  # type: ignore[import-not-found]  # the module around it builds enums

        # spawnp: a bare name is looked for on PATH, as Popen does; a path is used as it is
        pid = os.posix_spawnp(
            args[0],
            args,
            env,
            file_actions=actions,
            setsid=new_session,
            # Python ignores SIGPIPE and SIGXFSZ; a child (pyenv's shell shims) expects them
            setsigdef=[_signal.SIGPIPE, _signal.SIGXFSZ],
        )
    except NotImplementedError:  # a flag this system's posix_spawn lacks (setsid on old macOS)
        _close([*pipes, *ends])
        return _popen(args, env, stderr, new_session)
    except BaseException:
        _close([*pipes, *ends])
        raise
    _close(ends)
    return Spawned(args, pid, pipes)


def stop_group(process: Process) -> None:
    """Stop a child started with `new_session` if it still runs, with what it started (pyenv's
    shims, an interpreter uv runs: they would hold its output open, and the reaping wait);
    reaped either way."""
    if process.poll() is None:
        if os.name == "posix":
            import signal

            try:  # noqa: SIM105 - contextlib is not imported on this path (module docstring)
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # ended, and its group with it
        process.kill()
    process.communicate()


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _inheritable() -> Optional[list[int]]:
    """This process's descriptors that a child would inherit (the others close when it
    starts; spawn sets 0-2 anew after closing them); None where they cannot be listed."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found = []
        for name in names:
            try:
                if os.get_inheritable(int(name)):
                    found.append(int(name))
            except (ValueError, OSError):  # the listing's own descriptor, closed by now
                continue
        return found
    return None


def _popen(
    args: list[str], env: Mapping[str, str], stderr: bool, new_session: bool
) -> subprocess.Popen[str]:
    import subprocess

    return subprocess.Popen(
        args,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
        text=True,
        encoding=ENCODING,
        errors="replace",
        start_new_session=new_session,
    )
