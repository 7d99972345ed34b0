"""`setup` records a new lockfile only once its environment is live; an interrupted setup leaves
the old environment and its recorded lockfile consistent.

Setup runs in this process against the local test repositories: detection, planning and
verification are stand-ins (what is tested is the order of lock, install, record), locking and
installing are the real code. An interruption is a KeyboardInterrupt (Ctrl-C) raised at a chosen
step: right before the swap, or right after it, before the lockfile is moved into place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gpuenv.detect
import gpuenv.envs.transaction as transaction
import gpuenv.index.config
import gpuenv.lock
import gpuenv.setup.pending
import gpuenv.setup.planning
import gpuenv.verify
from gpuenv.cli import main
from gpuenv.envs.store import EnvLocation, read_metadata, store_root
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import load_knowledge_base
from gpuenv.setup.planning import SetupPlan
from gpuenv.setup.record import read_record
from installrepos import InstallRepos, jax_plan, run_in
from storehelpers import StandInVerdict


@pytest.fixture
def stack(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The JAX version setup will plan; change it to make setup install another stack."""
    chosen = {"jax": "0.4.30"}
    machine = describe_machine(
        load_knowledge_base(), gpu=None, driver=None, os_name="linux", arch=None
    )
    real_lock = gpuenv.lock.lock_plan

    def plan_setup(*_a: Any, **_kw: Any) -> SetupPlan:
        lockfile = store_root() / ".setup" / "default.lock.yml"
        return SetupPlan(jax_plan(chosen["jax"]), lockfile, None, (), False)

    def lock_plan(plan: Any, options: gpuenv.lock.LockOptions) -> Any:
        local = dict(indexes=install_repos.indexes, channels=(install_repos.channel,))
        return real_lock(plan, dataclasses.replace(options, exclude_newer="none", **local))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gpuenv.detect, "detect_machine", lambda: machine)
    monkeypatch.setattr(gpuenv.setup.planning, "plan_setup", plan_setup)
    monkeypatch.setattr(gpuenv.lock, "lock_plan", lock_plan)
    monkeypatch.setattr(gpuenv.index.config, "user_index_config", lambda: install_repos.indexes)
    monkeypatch.setattr(gpuenv.verify, "verify_environment", lambda *_a, **_kw: StandInVerdict())
    return chosen


def setup(*args: str) -> int:
    with pytest.raises(SystemExit) as exited:
        main(["setup", "-q", *args])
    return int(exited.value.code or 0)


def recorded() -> dict[str, Any]:
    """The state setup recorded, the lockfile at the recorded path, and the live environment."""
    state = read_record("default")
    assert state is not None
    lockfile = Path(state.lockfile)
    live = EnvLocation.named("default").current()
    assert live is not None
    meta = read_metadata(live)
    return {
        "state_sha": state.lockfile_sha256,
        "file_sha": hashlib.sha256(lockfile.read_bytes()).hexdigest(),
        "env_sha": meta["lockfile_sha256"],
        "env_lockfile": meta["lockfile"],
        "lockfile": str(lockfile),
        "jax": run_in(live / "bin" / "python", "import jax; print(jax.__version__)"),
        "live": live,
    }


def leftovers() -> list[str]:
    """Pending lockfiles, and version folders other than the one kept for a rollback."""
    setup_dir = store_root() / ".setup"
    where = EnvLocation.named("default")
    previous = where.previous_version()
    return [p.name for p in setup_dir.iterdir() if ".pending" in p.name] + [
        p.name
        for p in where.versions.iterdir()
        if p.is_dir() and not p.is_symlink() and (previous is None or p.name != previous.name)
    ]


def test_setup_records_its_lockfile_once_the_environment_is_live(stack: dict[str, str]) -> None:
    assert setup() == 0
    first = recorded()
    assert first["state_sha"] == first["file_sha"] == first["env_sha"]
    assert first["env_lockfile"] == first["lockfile"] and first["jax"] == "0.4.30"
    assert leftovers() == [first["live"].name]
    assert setup() == 0 and recorded() == first  # nothing changed: a no-op


def test_the_recorded_lockfile_header_names_the_file_and_how_to_refresh_it(
    stack: dict[str, str],
) -> None:
    """Written as a pending file and renamed: its header names the file it became, and says
    how setup's lockfile is refreshed (setup has no --check)."""
    assert setup() == 0
    header = Path(recorded()["lockfile"]).read_text(encoding="utf-8").split("version: 1")[0]
    assert "# Install:     gpuenv install default.lock.yml " in header
    assert ".pending" not in header
    assert "# Regenerate:  gpuenv setup -n default" in header
    assert "# Up to date?  gpuenv setup -n default again" in header and "--check" not in header


def test_setup_interrupted_before_the_swap_keeps_the_old_lockfile(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert setup() == 0
    before = recorded()
    stack["jax"] = "0.4.31"

    def interrupted(*_a: Any) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(transaction, "_swap", interrupted)
        assert setup("--force") == 130
    assert recorded() == before  # old environment, its lockfile, its record: all unchanged
    assert leftovers() == [before["live"].name]  # no pending lockfile, no half-built version


def test_setup_interrupted_after_the_swap_heals_on_the_next_run(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert setup() == 0
    before = recorded()
    stack["jax"] = "0.4.31"

    def interrupted(*_a: Any) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(gpuenv.setup.pending, "promote_lockfile", interrupted)
        assert setup("--force") == 130
    after = recorded()
    assert after["jax"] == "0.4.31"  # the new environment is live ...
    assert after["file_sha"] == before["file_sha"] == after["state_sha"]  # ... not yet recorded
    assert after["env_sha"] != after["state_sha"]  # which setup sees: not up to date
    assert not [name for name in leftovers() if ".pending" in name]

    assert setup() == 0  # no --force: the mismatch alone makes it finish the job
    healed = recorded()
    assert healed["state_sha"] == healed["file_sha"] == healed["env_sha"]
    assert healed["jax"] == "0.4.31" and leftovers() == [healed["live"].name]


def test_a_pending_lockfile_a_killed_setup_left_is_removed_by_the_next(
    stack: dict[str, str],
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer runs: its setup was killed
    setup_dir = store_root() / ".setup"
    setup_dir.mkdir(parents=True)
    stale = setup_dir / f".default.lock.yml.{gone.pid}-0123abcd.pending"
    running = setup_dir / f".default.lock.yml.{os.getpid()}-0123abcd.pending"
    unrelated = setup_dir / f".other.lock.yml.{gone.pid}-0123abcd.pending"
    for path in (stale, running, unrelated):
        path.write_text("half a lockfile")
    assert setup() == 0
    assert not stale.exists() and running.exists() and unrelated.exists()
