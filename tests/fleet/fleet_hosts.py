"""Hosts for the fleet test, on this machine: each a network namespace made here, joined to this
one by a veth pair, running its own sshd (key auth with a key made here) whose sessions get the
host's own PATH (its stand-in `nvidia-smi` first) and its own gpuenv store.

Addresses come from 198.18.0.0/15 (RFC 2544, for tests; never routed). Traffic goes only
between this namespace and the test's ones; everything is removed again by `Hosts.close()`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
SSH_PORT = 2222
# sshd's own PATH for sessions, after the host's stand-in folder
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def missing_tools() -> str | None:
    """Why the fleet test cannot run here, or None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root (network namespaces, sshd)"
    for tool in ("ip", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (apt-get install iproute2 openssh-client)"
    if not SSHD.exists():
        return f"needs {SSHD} (apt-get install openssh-server)"
    probe = f"gpuenv-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot make a network namespace here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@dataclass
class Host:
    name: str
    netns: str
    address: str
    folder: Path  # its sshd files, its stand-in bin/, its gpuenv store and caches
    env: dict[str, str]  # what its ssh sessions get
    sshd: subprocess.Popen[bytes] | None = None

    @property
    def bin(self) -> Path:
        return self.folder / "bin"


@dataclass
class Hosts:
    folder: Path
    key: Path = field(init=False)
    known_hosts: Path = field(init=False)
    hosts: list[Host] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.key = self.folder / "id_ed25519"
        _keygen(self.key)
        self.known_hosts = self.folder / "known_hosts"
        self.known_hosts.write_text("")

    def add(self, name: str, env: dict[str, str]) -> Host:
        """A namespace with its veth end, its sshd listening on it, reachable from here."""
        index = len(self.hosts)
        tag = f"{os.getpid() % 100000}{index}"
        here_addr, there_addr = _free_pair()
        host = Host(name, f"gpuenv-fleet-{tag}", there_addr, self.folder / name, {})
        host.folder.mkdir()
        host.bin.mkdir()
        self.hosts.append(host)  # from here on close() undoes it
        _ip("netns", "add", host.netns)
        _ip("link", "add", f"gf{tag}a", "type", "veth", "peer", "name", f"gf{tag}b")
        _ip("link", "set", f"gf{tag}b", "netns", host.netns)
        _ip("addr", "add", f"{here_addr}/30", "dev", f"gf{tag}a")
        _ip("link", "set", f"gf{tag}a", "up")
        inside = ("netns", "exec", host.netns, "ip")
        _ip(*inside, "addr", "add", f"{there_addr}/30", "dev", f"gf{tag}b")
        _ip(*inside, "link", "set", f"gf{tag}b", "up")
        _ip(*inside, "link", "set", "lo", "up")
        host.env = {"PATH": f"{host.bin}:{SYSTEM_PATH}", **env}
        self._start_sshd(host)
        return host

    def _start_sshd(self, host: Host) -> None:
        host_key = host.folder / "ssh_host_ed25519_key"
        _keygen(host_key)
        (host.folder / "authorized_keys").write_text(
            self.key.with_suffix(".pub").read_text(encoding="utf-8")
        )
        config = host.folder / "sshd_config"
        set_env = " ".join(f"{k}={v}" for k, v in sorted(host.env.items()))
        config.write_text(
            f"ListenAddress {host.address}:{SSH_PORT}\n"
            f"HostKey {host_key}\n"
            f"AuthorizedKeysFile {host.folder / 'authorized_keys'}\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"
            "Subsystem sftp internal-sftp\nMaxSessions 50\nMaxStartups 50\nLogLevel ERROR\n"
            f"SetEnv {set_env}\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # its privilege separation folder (Debian)
        log = (host.folder / "sshd.log").open("wb")
        host.sshd = subprocess.Popen(
            ["ip", "netns", "exec", host.netns, str(SSHD), "-D", "-e", "-f", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        public = host_key.with_suffix(".pub").read_text(encoding="utf-8").split()
        with self.known_hosts.open("a") as known:
            known.write(f"[{host.address}]:{SSH_PORT} {public[0]} {public[1]}\n")
        _wait_for(host)

    def close(self) -> None:
        """Stop every process in the test's namespaces (sshd and its sessions), then remove
        them with their veth pairs. Safe to call on a half-made set."""
        for host in self.hosts:
            for pid in _pids_in(host.netns):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            if host.sshd is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    host.sshd.wait(timeout=10)
                if host.sshd.poll() is None:
                    host.sshd.kill()
                    host.sshd.wait(timeout=10)
            deadline = time.monotonic() + 10
            while _pids_in(host.netns) and time.monotonic() < deadline:
                time.sleep(0.1)
            for pid in _pids_in(host.netns):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            # the namespace's end of the veth pair goes with it, and the pair with that end
            subprocess.run(["ip", "netns", "del", host.netns], capture_output=True, timeout=30)


def _free_pair() -> tuple[str, str]:
    """The two addresses of a /30 in 198.18.100.0/22 that no interface here uses yet."""
    shown = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True)
    taken = set(re.findall(r"inet (198\.18\.\d+\.\d+)/", shown.stdout))
    for subnet in range(0, 1024, 4):
        third, fourth = 100 + subnet // 256, subnet % 256
        pair = f"198.18.{third}.{fourth + 1}", f"198.18.{third}.{fourth + 2}"
        if not taken.intersection(pair):
            return pair
    raise RuntimeError("no free /30 left in 198.18.100.0/22")


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuenv-fleet-test", "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


def _pids_in(netns: str) -> list[int]:
    done = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True)
    return [int(p) for p in done.stdout.split()] if done.returncode == 0 else []


def _wait_for(host: Host, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if host.sshd is not None and host.sshd.poll() is not None:
            log = (host.folder / "sshd.log").read_text(errors="replace")
            raise RuntimeError(f"sshd for {host.name} exited ({host.sshd.returncode}): {log}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection((host.address, SSH_PORT), timeout=1),
        ):
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd for {host.name} did not listen on {host.address}:{SSH_PORT}")
