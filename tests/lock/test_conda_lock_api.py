"""conda-lock's lockfile modules load without its command line and without its name-mapping
module (requests, filelock, platformdirs), which stands in until something asks it a name."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.lock import conda_lock_api
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, build_install_repos, jax_plan, make_lock

HEAVY = ("requests", "filelock", "platformdirs", "conda_lock.lookup_cache")


def _after(code: str) -> list[str]:
    """Which of HEAVY a fresh interpreter has imported once `code` has run."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_loading_the_writer_imports_no_http_client_nor_file_locks() -> None:
    assert _after("from gpuenv.lock import conda_lock_api\nconda_lock_api.load()") == []
    # conda-lock's own module still imports them when it is really used
    used = "from gpuenv.lock import conda_lock_api\nconda_lock_api.load()\nconda_lock_api.real_lookup()"
    assert set(_after(used)) >= {"requests", "filelock"}


def test_the_stand_in_answers_with_conda_locks_own_mapping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conda_lock_api.load()
    import conda_lock.lockfile as lockfile_module  # what apply_categories calls

    real = conda_lock_api.real_lookup()
    assert real.__file__ is not None and real.__file__.endswith("lookup.py")
    asked: list[tuple[str, str]] = []

    def mapping(name: str, mapping_url: str) -> str:  # the download stays out of tests
        asked.append((name, mapping_url))
        return f"pypi-{name}"

    monkeypatch.setattr(real, "conda_name_to_pypi_name", mapping)
    answer = lockfile_module.conda_name_to_pypi_name("pyyaml", mapping_url="https://m.example/")
    assert answer == "pypi-pyyaml" and asked == [("pyyaml", "https://m.example/")]
    assert sys.modules["conda_lock.lookup"] is real  # the stand-in made way for it
    # any other name is the real module's too
    assert (
        conda_lock_api._LookupStandIn("x").pypi_name_to_conda_name is real.pypi_name_to_conda_name
    )


def test_the_stand_in_is_not_a_package_and_hides_nothing_of_the_import_system() -> None:
    stand_in = conda_lock_api._LookupStandIn("conda_lock.lookup")
    for name in ("__path__", "__file__", "__all__"):
        assert not hasattr(stand_in, name)


def test_conda_lock_still_writes_and_reads_what_gpuenv_reads(tmp_path: Path) -> None:
    repos: InstallRepos = build_install_repos(tmp_path / "repos")
    path = make_lock(repos, tmp_path / "jax.conda-lock.yml", jax_plan(), portable=True)
    parsed = conda_lock_api.load().parse_conda_lock_file(path)
    ours = load_locked(path)
    assert sorted(d.name for d in parsed.package) == sorted(
        [*(p.name for p in ours.pip), *(str(r["name"]) for r in ours.conda)]
    )
