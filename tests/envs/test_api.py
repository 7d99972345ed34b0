"""gpuenv.api: each function's happy path against local repositories, and a hostile case each
raising the documented GpuenvError with its exit status. Nothing is printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gpuenv.api as api
from gpuenv.envs.errors import EnvironmentNotFound, HashMismatchError, StoreInputError
from gpuenv.envs.store import EnvLocation
from gpuenv.errors import GpuenvError
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.names import LockNameError
from gpuenv.machine import Machine
from gpuenv.resolve.requirements import RequirementError
from gpuenv.resolve.resolver import ResolveError
from gpuenv.resolve.target import TargetError
from installrepos import PY, InstallRepos, gpuenv, jax_plan, make_lock, run_in

RTX = dict(gpu="RTX 3090", driver="535.183.01", os="linux", arch="x86_64")


def _raises(error: type[GpuenvError], code: int, call: object) -> GpuenvError:
    with pytest.raises(error) as caught:
        call()  # type: ignore[operator]
    assert caught.value.exit_code == code
    return caught.value


def test_describe_and_resolve_a_machine(capsys: pytest.CaptureFixture[str]) -> None:
    machine = api.describe(**RTX)
    assert isinstance(machine, Machine)
    assert machine.platform == "linux-64" and machine.gpus[0].compute_capability == "8.6"
    plan = api.resolve("torch", machine)
    assert plan.accelerator == "cuda" and plan.frameworks["torch"].cuda
    assert api.resolve(["torch"], machine, no_gpu=True).accelerator == "cpu"
    assert api.resolve(["torch"], machine, python="3.11").python == "3.11"
    assert capsys.readouterr() == ("", "")


def test_describe_an_os_by_its_name() -> None:
    assert api.describe(gpu="8.6", driver="560.94", os="win11").platform == "win-64"


def test_hostile_machines_and_requirements() -> None:
    _raises(TargetError, 2, lambda: api.describe(gpu="Frobnitz 9000"))
    _raises(GpuenvError, 2, lambda: api.describe(os="plan9"))
    _raises(GpuenvError, 2, lambda: api.describe(gpu="RTX 3090\n"))
    machine = api.describe(**RTX)
    _raises(RequirementError, 2, lambda: api.resolve("nosuchframework", machine))
    _raises(api.ApiUsageError, 2, lambda: api.resolve("torch", machine, python="../bin/py"))
    _raises(api.ApiUsageError, 2, lambda: api.resolve("torch", {"gpu": "3090"}))  # type: ignore[arg-type]
    old = api.describe(gpu="GeForce 940M", driver="300.1", os="linux")
    _raises(ResolveError, 3, lambda: api.resolve("torch", old, require_gpu=True))


def test_explain_is_what_the_cli_prints() -> None:
    text = api.explain(["jax"], api.describe(**RTX))
    cli = gpuenv(
        "explain", "jax", "--gpu", "RTX 3090", "--driver", "535.183.01", "--os", "linux",
        "--arch", "x86_64",
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == text + "\n"
    assert "Why:" in text


def test_lock_install_verify(
    install_repos: InstallRepos, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = api.lock(jax_plan(), tmp_path / "lab.conda-lock.yml", exclude_newer="none")
    assert result.path == tmp_path / "lab.conda-lock.yml" and result.path.is_file()
    assert result.pip_count >= 2 and result.plan.frameworks["jax"].version == "0.4.30"
    installed = api.install(result.path)  # named after the lockfile
    assert installed.changed and installed.link == EnvLocation.named("lab").link
    assert run_in(installed.python, "import jax; print(jax.__version__)") == "0.4.30"
    again = api.install(result.path, name="lab")
    assert not again.changed and again.env_dir == installed.env_dir
    assert again.python == installed.python and again.backend == installed.backend
    report = api.verify(name="lab")
    assert [f.name for f in report.frameworks] == ["jax"]
    assert capsys.readouterr() == ("", "")


def test_install_at_a_prefix_and_replace(install_repos: InstallRepos, tmp_path: Path) -> None:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    where = tmp_path / "envs" / "mine"
    assert api.install(old, prefix=where).link == where
    done = api.install(new, prefix=where)
    assert done.changed and run_in(done.python, "import jax; print(jax.__version__)") == "0.4.31"


def test_hostile_lock_arguments(install_repos: InstallRepos, tmp_path: Path) -> None:
    _raises(LockNameError, 2, lambda: api.lock(jax_plan(), tmp_path / "x.conda-lock.yml",
                                               format="pylock"))  # fmt: skip
    machine = api.describe(**RTX)
    _raises(api.ApiUsageError, 2, lambda: api.lock(jax_plan(), tmp_path / "y.yml", machine))
    assert not list(tmp_path.iterdir())


def test_hostile_install_arguments(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    _raises(StoreInputError, 2, lambda: api.install(lockfile, name="../escape"))
    _raises(StoreInputError, 2, lambda: api.install(lockfile, name="a", prefix=tmp_path / "p"))
    not_one = tmp_path / "notes.conda-lock.yml"
    not_one.write_text("hello: [this is no lockfile\n")
    _raises(LockfileError, 2, lambda: api.install(not_one, name="x"))
    _raises(api.ApiUsageError, 2, lambda: api.install(tmp_path / "missing.lock.yml"))
    _raises(StoreInputError, 2, lambda: api.install(lockfile, offline=True))
    assert EnvLocation.named("x").current() is None


def test_an_altered_hash_is_refused_and_the_old_environment_stays(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    good = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    first = api.install(good, name="lab")
    newer = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    text = newer.read_text()
    sha = next(line.split()[-1] for line in text.splitlines() if "sha256:" in line)
    newer.write_text(text.replace(sha, "ab" * 32, 1))
    _raises(HashMismatchError, 1, lambda: api.install(newer, name="lab"))
    assert EnvLocation.named("lab").current() == first.env_dir


def test_verify_nothing_there() -> None:
    _raises(EnvironmentNotFound, 2, lambda: api.verify(name="nothing-here"))
    _raises(StoreInputError, 2, lambda: api.verify(name="../up"))


def test_importing_the_api_is_light() -> None:
    probe = (
        "import sys, gpuenv.api\n"
        "print(sorted(m for m in ('click', 'gpuenv.lock.pipeline', 'gpuenv.recipes.kb',"
        " 'gpuenv.envs.transaction', 'subprocess') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    bare = "import sys, gpuenv; print('gpuenv.api' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", bare], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_lock_requirements_for_a_described_machine_as_the_cli_does(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    machine = api.describe(os="linux", arch="x86_64")
    out = tmp_path / "api.conda-lock.yml"
    result = api.lock("jax", out, machine, python=PY, exclude_newer="none")
    # the probe limits the plan to what the (local) index publishes
    assert result.plan.frameworks["jax"].version == "0.4.31" and result.plan.python == PY
    cli_out = tmp_path / "cli.conda-lock.yml"
    cli = gpuenv(
        "lock", "jax", "--os", "linux", "--arch", "x86_64", "--python", PY,
        "--exclude-newer", "none", "-o", str(cli_out),
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr

    def body(path: Path) -> list[str]:  # the header names the command that made the file
        return [line for line in path.read_text().splitlines() if not line.startswith("#")]

    assert body(out) == body(cli_out)
    assert "file:" not in out.read_text()  # for another machine: nothing of this one
