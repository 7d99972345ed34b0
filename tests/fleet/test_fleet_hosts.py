"""The gpuenv.lab role for real, against three hosts on this machine.

Each host is a network namespace with its own sshd and its own stand-in GPU (a recorded
`nvidia-smi` of tests/fixtures/detect): an Ada laptop, a Kepler desktop, a CPU-only box. The
lab file has one class for each; their lockfiles are locked from stand-in wheels on a local
index that counts what it serves. The hosts cannot reach that index (it listens on this
namespace's loopback): they install offline, from the files the controller fetched once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from detect_fakes import CURRENT, R470, SMI, write_fake_smi
from fleet_ansible import PLAYBOOK, ansible_env, ansible_tool, gpuenv_wrapper, recap
from fleet_hosts import SSH_PORT, Hosts, missing_tools
from fleet_lab import CLASSES, Upstream, build_wheels, lockfile_files, serve_upstream, write_lab

STAND_IN_GPUS = {"ada": CURRENT, "kepler": R470, "cpu": None}  # host -> its nvidia-smi


@dataclass
class Fleet:
    tmp: Path
    hosts: Hosts
    upstream: Upstream
    lab: Path
    wheels: Path
    inventory: Path
    env: dict[str, str]

    def run(self, controller: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Any]:
        """ansible-playbook over the inventory; its result and the report it wrote."""
        report = self.tmp / "report.json"
        report.unlink(missing_ok=True)
        variables = {
            "gpuenv_lab": str(self.lab),
            "gpuenv_venv": str(self.tmp / "gpuenv"),
            "gpuenv_controller_gpuenv": str(self.tmp / "gpuenv" / "bin" / "gpuenv"),
            "gpuenv_controller_dir": str(self.tmp / controller),
            "gpuenv_env_name": "lab",
            "gpuenv_report": str(report),
        }
        started = time.monotonic()
        done = subprocess.run(
            [
                ansible_tool(),
                "-i",
                str(self.inventory),
                str(PLAYBOOK),
                "-e",
                json.dumps(variables),
                *extra,
            ],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=300,
            cwd=self.tmp,
        )
        print(f"ansible-playbook {' '.join(extra)}: {time.monotonic() - started:.1f} s")
        data = json.loads(report.read_text()) if report.exists() else None
        return done, data

    def wheel_bytes(self, names: set[str]) -> int:
        return sum((self.wheels / n).stat().st_size for n in names)


def _host_env(folder: Path) -> dict[str, str]:
    """What each host's ssh sessions get beside PATH: its own store and caches, no index."""
    return {
        "GPUENV_HOME": str(folder / "home"),
        "GPUENV_CACHE_DIR": str(folder / "cache"),
        "UV_CACHE_DIR": str(folder / "uv-cache"),
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "GPUENV_DISABLE_NVML": "1",  # the stand-in nvidia-smi is the host's GPU
        "PIP_CONFIG_FILE": "/dev/null",
        # bash reads ~/.bashrc for an ssh command only as a top-level shell: a clean host's
        # sessions, not this machine's root account's (a pyenv there would slow every task)
        "SHLVL": "1",
    }


def _inventory(path: Path, hosts: Hosts) -> Path:
    lines = ["[lab]"]
    for h in hosts.hosts:
        lines.append(
            f"{h.name} ansible_host={h.address} ansible_port={SSH_PORT}"
            f" gpuenv_host_dir={h.folder / 'fleet'} ansible_remote_tmp={h.folder / 'ansible-tmp'}"
        )
    ssh_args = (
        f"-F /dev/null -o UserKnownHostsFile={hosts.known_hosts} -o StrictHostKeyChecking=yes"
        " -o IdentitiesOnly=yes -o ConnectTimeout=10"
    )
    lines += [
        "",
        "[lab:vars]",
        "ansible_user=root",
        f"ansible_ssh_private_key_file={hosts.key}",
        f"ansible_ssh_common_args='{ssh_args}'",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    why = missing_tools()
    if why:
        pytest.skip(f"the fleet test {why}")
    ansible_tool()
    wheels = build_wheels(tmp_path / "wheels")
    control = Path(tempfile.mkdtemp(prefix="gf-cp-", dir="/tmp"))  # ssh sockets: a short path
    hosts = Hosts(tmp_path / "hosts")
    try:
        with serve_upstream(tmp_path / "upstream", wheels) as upstream:
            (tmp_path / "lab").mkdir()
            lab = write_lab(tmp_path / "lab", upstream.url)
            for name, smi in STAND_IN_GPUS.items():
                host = hosts.add(name, _host_env(tmp_path / "hosts" / name))
                if smi is not None:
                    write_fake_smi(host.bin, smi)
            gpuenv_wrapper(tmp_path / "gpuenv")
            env = ansible_env(
                tmp_path,
                ANSIBLE_PIPELINING="1",
                ANSIBLE_SSH_CONTROL_PATH_DIR=str(control),
                ANSIBLE_FORKS="5",
                # the controller: the lab's index, its own store and caches
                PIP_INDEX_URL=upstream.url,
                PIP_CONFIG_FILE="/dev/null",
                GPUENV_HOME=str(tmp_path / "controller-home"),
                GPUENV_CACHE_DIR=str(tmp_path / "controller-cache"),
                UV_CACHE_DIR=str(tmp_path / "controller-uv-cache"),
                UV_NO_CONFIG="1",
            )
            upstream.reset()  # locking read the index; from here on only the fleet counts
            yield Fleet(
                tmp_path,
                hosts,
                upstream,
                lab,
                tmp_path / "wheels",
                _inventory(tmp_path / "inventory.ini", hosts),
                env,
            )
    finally:
        hosts.close()
        shutil.rmtree(control, ignore_errors=True)


def _log(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout[-8000:] + done.stderr[-3000:]


def test_one_run_onboards_three_hosts_each_with_its_class(fleet: Fleet) -> None:
    locks = {c.name: fleet.lab.parent / "lockfiles" / f"{c.name}.conda-lock.yml" for c in CLASSES}
    files = {name: lockfile_files(path) for name, path in locks.items()}
    started = time.monotonic()

    union = set().union(*files.values())

    # one host, its controller fetching for the whole lab (gpuenv_fetch_classes=all)
    limit = ("--limit", "ada,localhost", "-e", "gpuenv_fetch_classes=all")
    done, report = fleet.run("controller-one", *limit)
    assert done.returncode == 0, _log(done)
    assert report["summary"]["failed"] == [] and report["hosts"]["ada"]["ok"] is True
    assert fleet.upstream.files() == dict.fromkeys(union, 1)
    one_host = fleet.upstream.counts()
    for part in ("home", "cache", "uv-cache", "fleet"):  # ada starts afresh below
        shutil.rmtree(fleet.hosts.folder / "ada" / part, ignore_errors=True)
    fleet.upstream.reset()

    # three hosts, three classes, one run: each ends with its class's environment, verified
    stale = fleet.hosts.folder / "cpu" / "fleet" / "wheelhouse" / "old-1.0-py3-none-any.whl"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"a file an older lockfile of the class named")
    done, report = fleet.run("controller")
    assert done.returncode == 0, _log(done)
    for cls in CLASSES:
        host = report["hosts"][cls.name]
        assert host["ok"] is True and host["class"] == cls.name, host
        assert host["changed"] is True and host["install"]["changed"] is True
        assert host["install"]["frameworks"]["jax"]["version"] == cls.jax
        jax = host["verify"]["frameworks"]["jax"]
        assert host["verify"]["ok"] is True and jax["version"] == cls.jax, jax
        # the GPU classes' stand-in JAX computed on the host's stand-in GPU, the CPU class's on the CPU
        assert jax["device"].startswith("gpu:0" if cls.plugin else "cpu"), jax
    assert recap(done.stdout)["kepler"]["changed"] > 0
    for cls in CLASSES:  # the copies of the class's files went once installed, older ones too
        wheelhouse = fleet.hosts.folder / cls.name / "fleet" / "wheelhouse"
        assert list(wheelhouse.iterdir()) == [], cls.name
    # one download for the fleet: every file once, however many hosts share it; as much as
    # for one host when its controller fetched the lab's classes
    assert fleet.upstream.files() == dict.fromkeys(union, 1)
    three_hosts = fleet.upstream.counts()
    assert three_hosts == one_host
    assert three_hosts[0] == fleet.wheel_bytes(union)
    assert three_hosts[0] < sum(fleet.wheel_bytes(f) for f in files.values())
    print(f"upstream (wheel bytes, all bytes, requests): 1 host {one_host}, 3 hosts {three_hosts}")

    # a second run changes nothing and downloads nothing
    fleet.upstream.reset()
    again, report = fleet.run("controller")
    assert again.returncode == 0, _log(again)
    changed = {h: r["changed"] for h, r in recap(again.stdout).items() if h != "localhost"}
    assert changed == {"ada": 0, "kepler": 0, "cpu": 0}, _log(again)  # localhost: the report
    assert all(h["changed"] is False and h["ok"] for h in report["hosts"].values())
    assert fleet.upstream.total_requests() == 0

    # a class without its lockfile: that host fails with the lab's message; a GPU that stopped
    # answering the framework (detect still sees it): that host fails verify; the other finishes
    locks["kepler"].unlink()
    scenario = fleet.hosts.folder / "ada" / "bin" / "scenario.json"
    broken = {"match": ["--query-gpu=name"], "file": str(SMI / "no-driver.txt"), "exit": 9}
    scenario.write_text(json.dumps([broken, *json.loads(scenario.read_text())]))
    fleet.upstream.reset()
    failed, report = fleet.run("controller-again")  # an empty wheelhouse
    assert failed.returncode != 0
    # only the classes in play (gpuenv_fetch_classes=matched): kepler's plugin is not fetched
    assert fleet.upstream.files() == dict.fromkeys(files["ada"] | files["cpu"], 1)
    kepler = report["hosts"]["kepler"]
    expected = f"lab class kepler has no lockfile: {locks['kepler']} does not exist"
    assert kepler["ok"] is False and expected in kepler["error"], kepler
    assert expected in failed.stdout
    ada = report["hosts"]["ada"]
    assert ada["ok"] is False and ada["verify"]["ok"] is False, ada
    assert "gpuenv verify failed" in ada["error"] and "JAX fell back to the CPU" in ada["error"]
    assert report["hosts"]["cpu"]["ok"] is True
    assert sorted(report["summary"]["failed"]) == ["ada", "kepler"]
    print(f"fleet test: {time.monotonic() - started:.0f} s of ansible-playbook runs")
