"""`gpuenv lock` starts uv on the plan resolved as if every source answered, while the index
probe runs (issue 13). The probe only confirms that plan or changes it: when it confirms the pip
part, that uv run is the lock's; when it changes it, or anything fails, the run is stopped and
the lock is what it was without the head start, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import gpuenv.lock
import gpuenv.lock.pipeline
from gpuenv.cli import cli
from gpuenv.fs.atomic_write import OutputPathError
from gpuenv.index.config import IndexConfig
from gpuenv.lock import LockOptions, lock_plan, start_pip_lock
from gpuenv.lock.availability import SourcedPlan, resolve_with_sources
from gpuenv.lock.errors import LockError, SourceUnreachableError
from gpuenv.lock.load import load_locked
from gpuenv.lock.pypi import PipCompile, pip_request
from localrepos import build_simple_index, build_wheel

WIN311 = "cp311-cp311-win_amd64"
FLAGS = ["jax", "--no-gpu", "--os", "windows", "--python", "3.11", "--exclude-newer", "none"]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`full` has the jax the knowledge base picks (0.10.2) and the one before; `older` lacks
    0.10.2, so the probe makes the lock fall back to 0.10.1."""
    root = tmp_path_factory.mktemp("early-uv")
    wheels = root / "wheels"
    numpy = build_wheel(wheels, "numpy", "1.26.4", tag=WIN311)
    by_version = {
        v: [
            build_wheel(wheels, "jax", v, requires=[f"jaxlib=={v}", "numpy"]),
            build_wheel(wheels, "jaxlib", v, tag=WIN311, requires=["numpy"]),
        ]
        for v in ("0.10.1", "0.10.2")
    }
    return {
        "full": build_simple_index(
            root / "full", [numpy, *by_version["0.10.1"], *by_version["0.10.2"]]
        ),
        "older": build_simple_index(root / "older", [numpy, *by_version["0.10.1"]]),
    }


def sourced(describe: Any, kb: Any, index: str) -> SourcedPlan:
    machine = describe(os_name="windows")
    config = IndexConfig(index_url=index, origin="test")
    return resolve_with_sources(machine, ["jax"], kb, config, python="3.11", no_gpu=True)


def options(index: str, out: Path, **kw: Any) -> LockOptions:
    base: dict[str, Any] = dict(
        output=out,
        indexes=IndexConfig(index_url=index, origin="test"),
        exclude_newer="none",
        command="gpuenv lock jax",
    )
    return LockOptions(**{**base, **kw})


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[PipCompile]:
    """Every uv run lock_plan starts itself."""
    runs: list[PipCompile] = []

    class Counted(PipCompile):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            runs.append(self)

    monkeypatch.setattr(gpuenv.lock.pipeline, "PipCompile", Counted)
    return runs


@pytest.fixture
def slow_uv(tmp_path: Path) -> str:
    """A `uv` that never answers: what a lock must stop, not wait for."""
    script = tmp_path / "slow-uv"
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(120)\n")
    script.chmod(0o755)
    return str(script)


def slow_run(plan: Any, index: str, uv: str) -> tuple[PipCompile, subprocess.Popen[str]]:
    config = IndexConfig(index_url=index, origin="test")
    run = PipCompile(pip_request(plan, config, None, uv=uv), plan)
    process = run._process
    assert process is not None and process.poll() is None
    return run, process


def assert_stopped(run: PipCompile, process: subprocess.Popen[str]) -> None:
    assert process.returncode is not None and process.returncode < 0  # killed, and reaped
    assert run._work is None  # its folder removed


def test_a_run_started_before_a_probe_that_confirms_the_plan_is_the_lock(
    describe: Any, kb: Any, indexes: dict[str, str], made: list[PipCompile], tmp_path: Path
) -> None:
    found = sourced(describe, kb, indexes["full"])
    # the probe confirms the stack (its reasons differ: they name what it found unavailable)
    assert found.plan.frameworks == found.ideal.frameworks and found.plan.pip == found.ideal.pip
    assert found.plan.frameworks["jax"].version == "0.10.2"
    early = start_pip_lock(found.ideal, options(indexes["full"], tmp_path / "a.conda-lock.yml"))
    assert early is not None
    folder = Path(early._work.name)  # type: ignore[union-attr]
    lock_plan(
        found.plan,
        options(indexes["full"], tmp_path / "a.conda-lock.yml"),
        found.ideal,
        started=early,
    )
    assert made == [early]  # uv did not run again
    assert not folder.exists()
    # the same lock without the head start: the same bytes
    first = (tmp_path / "a.conda-lock.yml").read_bytes()
    lock_plan(found.plan, options(indexes["full"], tmp_path / "a.conda-lock.yml"), found.ideal)
    assert len(made) == 2
    assert first == (tmp_path / "a.conda-lock.yml").read_bytes()
    assert {p.name: p.version for p in load_locked(tmp_path / "a.conda-lock.yml").pip} == {
        "jax": "0.10.2",
        "jaxlib": "0.10.2",
        "numpy": "1.26.4",
    }


def test_a_plan_the_probe_changed_is_locked_anew_and_the_early_run_stopped(
    describe: Any,
    kb: Any,
    indexes: dict[str, str],
    made: list[PipCompile],
    slow_uv: str,
    tmp_path: Path,
) -> None:
    found = sourced(describe, kb, indexes["older"])
    assert found.ideal.frameworks["jax"].version == "0.10.2"
    assert found.plan.frameworks["jax"].version == "0.10.1"
    early, process = slow_run(found.ideal, indexes["older"], slow_uv)
    start = time.monotonic()
    result = lock_plan(
        found.plan, options(indexes["older"], tmp_path / "a.conda-lock.yml"), found.ideal, early
    )
    assert time.monotonic() - start < 60  # not waited for: the slow uv sleeps 120 s
    assert_stopped(early, process)
    assert len(made) == 1  # the plan's own run
    locked = load_locked(result.path)
    assert {p.name: p.version for p in locked.pip}["jax"] == "0.10.1"
    assert "jax 0.10.2 [cpu] -> 0.10.1 [cpu]" in locked.fallback
    first = result.path.read_bytes()
    lock_plan(found.plan, options(indexes["older"], result.path), found.ideal)
    assert result.path.read_bytes() == first


def test_a_real_early_run_that_failed_on_the_ideal_plan_does_not_fail_the_fallback(
    describe: Any, kb: Any, indexes: dict[str, str], tmp_path: Path
) -> None:
    found = sourced(describe, kb, indexes["older"])
    out = tmp_path / "a.conda-lock.yml"
    early = start_pip_lock(found.ideal, options(indexes["older"], out))
    assert early is not None
    early._wait()  # uv has failed: the index has no jax 0.10.2
    result = lock_plan(found.plan, options(indexes["older"], out), found.ideal, early)
    assert {p.name: p.version for p in load_locked(result.path).pip}["jax"] == "0.10.1"


def test_a_lock_refused_after_the_start_stops_the_early_run(
    describe: Any, kb: Any, indexes: dict[str, str], slow_uv: str, tmp_path: Path
) -> None:
    found = sourced(describe, kb, indexes["full"])
    early, process = slow_run(found.ideal, indexes["full"], slow_uv)
    refused = options(indexes["full"], tmp_path / "pylock.toml", format="pylock", portable=True)
    with pytest.raises(LockError, match="--portable cannot be written as pylock"):
        lock_plan(found.plan, refused, found.ideal, early)
    assert_stopped(early, process)


@pytest.mark.parametrize(
    ("bad", "refusal"),
    [
        (dict(format="pylock", portable=True), LockError),
        (dict(exclude_newer="yesterday"), LockError),
        (dict(output="link"), OutputPathError),  # a link where the lockfile goes
        (dict(output="folder"), OutputPathError),
    ],
    ids=["pylock-portable", "bad-date", "output-link", "output-folder"],
)
def test_what_lock_plan_refuses_starts_no_uv_and_is_refused_as_before(
    bad: dict[str, Any],
    refusal: type[Exception],
    describe: Any,
    kb: Any,
    indexes: dict[str, str],
    tmp_path: Path,
) -> None:
    found = sourced(describe, kb, indexes["full"])
    if bad.get("output") == "link":
        (tmp_path / "target.conda-lock.yml").write_text("keep me")
        (tmp_path / "link.conda-lock.yml").symlink_to(tmp_path / "target.conda-lock.yml")
        bad = dict(output=tmp_path / "link.conda-lock.yml")
    elif bad.get("output") == "folder":
        (tmp_path / "folder.conda-lock.yml").mkdir()
        bad = dict(output=tmp_path / "folder.conda-lock.yml")
    out = tmp_path / ("pylock.toml" if bad.get("format") == "pylock" else "x.conda-lock.yml")
    refused = options(indexes["full"], out, **bad)
    assert start_pip_lock(found.ideal, refused) is None
    with pytest.raises(refusal):  # gpuenv's own, clear refusal
        lock_plan(found.plan, refused, found.ideal)
    if "output" in bad and bad["output"].name.startswith("link"):
        assert (tmp_path / "target.conda-lock.yml").read_text() == "keep me"


# -- the command ------------------------------------------------------------------------------


def _lock_cli(index: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "-v", "lock", *FLAGS, "-o", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _uv_runs(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " pip compile " in line]


def test_the_command_runs_uv_once_when_the_probe_confirms_the_plan(
    indexes: dict[str, str], tmp_path: Path
) -> None:
    done = _lock_cli(indexes["full"], tmp_path / "jax.conda-lock.yml")
    assert done.returncode == 0, done.stderr
    assert len(_uv_runs(done.stderr)) == 1
    assert "probe changed the plan" not in done.stderr
    pip = {p.name: p.version for p in load_locked(tmp_path / "jax.conda-lock.yml").pip}
    assert pip["jax"] == "0.10.2"


def test_the_command_locks_the_fallback_when_the_probe_changes_the_plan(
    indexes: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "jax.conda-lock.yml"
    done = _lock_cli(indexes["older"], out)
    assert done.returncode == 0, done.stderr
    assert len(_uv_runs(done.stderr)) == 2  # on the ideal plan, then on the fallback
    assert "the index probe changed the plan: uv runs again" in done.stderr
    locked = load_locked(out)
    assert {p.name: p.version for p in locked.pip}["jax"] == "0.10.1"
    assert "jax 0.10.2 [cpu] -> 0.10.1 [cpu]" in locked.fallback


def test_a_failure_after_uv_started_stops_it(
    indexes: dict[str, str],
    slow_uv: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The probe finds every source unreachable (exit 5) while uv already runs: the command
    ends with its usual message, and uv with it."""
    started: list[tuple[PipCompile, subprocess.Popen[str]]] = []
    real_start = gpuenv.lock.start_pip_lock

    def start(plan: Any, opts: LockOptions, *guessed: Any) -> Any:
        run = real_start(plan, opts, *guessed)
        assert run is not None and run._process is not None
        started.append((run, run._process))
        return run

    def probe_fails(*args: Any, **kw: Any) -> Any:
        assert started, "uv starts before the probe"
        raise SourceUnreachableError("could not reach https://index.example/simple/")

    monkeypatch.setattr("gpuenv.uv.binary.find_uv", lambda: slow_uv)
    monkeypatch.setattr(gpuenv.lock, "start_pip_lock", start)
    monkeypatch.setattr("gpuenv.lock.availability.resolve_with_sources", probe_fails)
    monkeypatch.setenv("PIP_INDEX_URL", indexes["full"])
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    res = CliRunner().invoke(cli, ["lock", *FLAGS, "-o", str(tmp_path / "x.conda-lock.yml")])
    # gpuenv.cli.main turns it into exit 5 with its message, as before
    assert isinstance(res.exception, SourceUnreachableError), res.output
    ((run, process),) = started
    assert_stopped(run, process)
    assert not (tmp_path / "x.conda-lock.yml").exists()


def test_a_uv_that_does_not_start_is_left_for_lock_plan_to_report(
    describe: Any,
    kb: Any,
    indexes: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    found = sourced(describe, kb, indexes["full"])
    monkeypatch.setattr("gpuenv.uv.binary.find_uv", lambda: str(tmp_path / "no-such-uv"))
    opts = options(indexes["full"], tmp_path / "x.conda-lock.yml")
    assert start_pip_lock(found.ideal, opts) is None
    with pytest.raises(FileNotFoundError):  # what lock_plan says of it, with or without
        lock_plan(found.plan, opts, found.ideal)


def test_uv_starts_before_the_lockfile_writer_and_the_probe_are_imported(
    indexes: dict[str, str], tmp_path: Path
) -> None:
    """What the lock needs only after uv starts (conda-lock's models, yaml, the probe and its
    HTTP client, the TOML parser) loads while uv works, not before it starts."""
    heavy = (
        "conda_lock",
        "pydantic",
        "yaml",
        "requests",
        "tomllib",
        "gpuenv.lock.conda_lock.write",
        "gpuenv.lock.availability",
        "packaging.tags",
        "gpuenv.recipes.check",  # the knowledge base's own checks: never a lock's business
        "gpuenv.maint.online",
        # modules the lock uses only once uv runs: 7 ms of imports before uv (a cold lock)
        "hashlib",  # the written lockfile's hash
        "shutil",  # atomic writes
        "tempfile",
        "subprocess",  # uv starts without it (gpuenv.uv.spawn)
    )
    out = tmp_path / "jax.conda-lock.yml"
    code = (
        "import sys\n"
        "from gpuenv.uv import spawn\n"
        "seen = []\n"
        "start = spawn.spawn\n"
        "def spy(args, **kw):\n"
        "    if not seen and '--output-file' in args:\n"
        f"        seen.append(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "    return start(args, **kw)\n"
        "spawn.spawn = spy\n"
        "from gpuenv.cli import main\n"
        "try:\n"
        f"    main(['lock', *{FLAGS!r}, '-o', {str(out)!r}])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        f"print(seen, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "PIP_INDEX_URL": indexes["full"], "PIP_CONFIG_FILE": os.devnull}
    for _ in range(2):  # the first run parses the knowledge base's TOML files into its cache
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
    before_uv, at_the_end = done.stdout.strip().splitlines()[-1].split("] [")
    assert before_uv == "[[]"  # uv started once, with none of them loaded
    assert "conda_lock" in at_the_end and "gpuenv.lock.availability" in at_the_end
    assert "gpuenv.recipes.check" not in at_the_end and "gpuenv.maint.online" not in at_the_end
