"""setup imports each framework once: verify runs before the swap and is the smoke test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from gpuenv.envs.store import EnvLocation
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock
from isolation import record_uv_calls
from localrepos import build_simple_index, build_wheel

COUNTING_JAX = """
import os
with open(os.environ["GPUENV_TEST_IMPORT_LOG"], "a") as log:
    log.write("jax imported\\n")
__version__ = "0.4.30"
"""

LAB = """
[lab]
lockfiles = "locks"

[stack]
requirements = ["jax"]

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


@pytest.fixture
def counting_repos(tmp_path: Path, install_repos: InstallRepos) -> InstallRepos:
    wheels = tmp_path / "counting-wheels"
    built = [
        build_wheel(
            wheels,
            "jax",
            "0.4.30",
            requires=["numpy"],
            files={"jax/__init__.py": COUNTING_JAX, "jax/numpy.py": ""},
        ),
        build_wheel(
            wheels, "numpy", "1.26.4", files={"numpy/__init__.py": "__version__ = '1.26.4'\n"}
        ),
    ]
    index = build_simple_index(tmp_path / "counting-index", built)
    return InstallRepos(index=index, channel=install_repos.channel, wheels=wheels)


def test_setup_imports_the_framework_once(
    counting_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    (tmp_path / "locks").mkdir()
    make_lock(counting_repos, tmp_path / "locks" / "cpu.lock.yml", jax_plan("0.4.30"))
    log = tmp_path / "imports.log"
    monkeypatch.setenv("PIP_INDEX_URL", counting_repos.index)
    result = gpuenv(
        "setup", "--lab", str(lab), "--name", "once", env={"GPUENV_TEST_IMPORT_LOG": str(log)}
    )
    # the stand-in jax imports but has no devices: verify reports that, after one import
    assert "lab class cpu" in result.stderr, result.stderr + result.stdout
    assert log.read_text().splitlines() == ["jax imported"], result.stderr
    assert EnvLocation.named("once").current() is not None, result.stderr


def test_a_framework_that_does_not_import_is_never_switched_to(
    counting_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    (tmp_path / "locks").mkdir()
    make_lock(counting_repos, tmp_path / "locks" / "cpu.lock.yml", jax_plan("0.4.30"))
    monkeypatch.setenv("PIP_INDEX_URL", counting_repos.index)
    # no log variable: the stand-in's import raises KeyError
    result = gpuenv("setup", "--lab", str(lab), "--name", "broken")
    assert result.returncode == 1
    assert "failed its check" in result.stderr and "jax" in result.stderr
    assert "Traceback" not in result.stderr.split("failed its check")[0]
    assert EnvLocation.named("broken").current() is None


@pytest.mark.skipif(sys.platform == "win32", reason="a /bin/sh wrapper around uv")
def test_setup_reads_the_lab_lockfile_once(
    counting_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The lockfile read for the plan is the one installed: parsed once, not again; and uv looks
    for its Python once (started before setup's imports and checks, answered for the venv)."""
    import gpuenv.lock.conda_lock.read as read_module
    from gpuenv.cli import main

    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    (tmp_path / "locks").mkdir()
    lockfile = make_lock(counting_repos, tmp_path / "locks" / "cpu.lock.yml", jax_plan("0.4.30"))
    calls = record_uv_calls(monkeypatch, tmp_path)  # setup's calls, not the lab's lock's
    monkeypatch.setenv("PIP_INDEX_URL", counting_repos.index)
    monkeypatch.setenv("GPUENV_TEST_IMPORT_LOG", str(tmp_path / "imports.log"))
    real_parse = read_module.parse_lockfile
    parsed: list[Path] = []

    def counting_parse(raw: bytes, path: Path) -> Any:
        parsed.append(Path(path))
        return real_parse(raw, path)

    monkeypatch.setattr(read_module, "parse_lockfile", counting_parse)
    with pytest.raises(SystemExit):
        main(["setup", "--lab", str(lab), "--name", "read-once", "-q"])
    err = capsys.readouterr().err
    assert parsed == [lockfile], err
    assert EnvLocation.named("read-once").current() is not None, err
    assert (tmp_path / "imports.log").read_text().splitlines() == ["jax imported"]
    commands = [line.split()[:2] for line in calls.read_text().splitlines()]
    assert commands == [
        ["python", "find"],
        ["venv", str(EnvLocation.named("read-once").current())],
        ["pip", "install"],
    ]
