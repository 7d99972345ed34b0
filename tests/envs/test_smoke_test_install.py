"""`gpuenv install` never switches to an environment whose frameworks do not import: it keeps the
old one and exits 1 (tested through install itself, not only through setup)."""

from __future__ import annotations

from pathlib import Path

from gpuenv.envs.store import EnvLocation, interpreter, read_metadata
from gpuenv.index.config import IndexConfig
from gpuenv.lock.pipeline import LockOptions, lock_plan
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in
from localrepos import build_simple_index, build_wheel


def test_a_framework_that_fails_to_import_never_goes_live(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    good = make_lock(install_repos, tmp_path / "good.lock.yml", jax_plan("0.4.30"))
    assert gpuenv("install", str(good), "--name", "lab").returncode == 0
    before = EnvLocation.named("lab").current()
    broken = build_wheel(
        tmp_path / "w",
        "jax",
        "0.4.31",
        requires=["numpy"],
        files={"jax/__init__.py": "raise ImportError('this jax build is broken')\n"},
    )
    numpy = next(install_repos.wheels.glob("numpy-*.whl"))
    index = build_simple_index(tmp_path / "index", [broken, numpy])
    bad = tmp_path / "bad.lock.yml"
    lock_plan(
        jax_plan("0.4.31"),
        LockOptions(output=bad, indexes=IndexConfig(index_url=index), exclude_newer="none"),
    )
    done = gpuenv("install", str(bad), "--name", "lab", "--index", index)
    assert done.returncode == 1, done.stderr
    assert "this jax build is broken" in done.stderr and "does not import" in done.stderr
    assert EnvLocation.named("lab").current() == before and before is not None
    assert read_metadata(before)["stack"] == {"jax": "0.4.30 [cpu]"}
    assert run_in(interpreter(before), "import jax; print(jax.__version__)") == "0.4.30"
    versions = EnvLocation.named("lab").versions
    assert [p.name for p in versions.iterdir() if p.is_dir() and not p.is_symlink()] == [
        before.name
    ]
