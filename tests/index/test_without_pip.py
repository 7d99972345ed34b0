"""gpuenv installed the way CLI tools are (no pip in its environment) still locks and installs,
reading the lab's index from pip's configuration file by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.uv.binary import find_uv
from installrepos import build_install_repos, jax_plan

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def no_pip_gpuenv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gpuenv built from this checkout into a venv made without pip (`uv venv`, no --seed)."""
    venv = tmp_path_factory.mktemp("no-pip") / "venv"
    uv = find_uv()
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_INDEX"))}
    install = [uv, "pip", "install", "-q", "--python", str(python), str(REPO)]
    # offline when uv's cache holds gpuenv's dependencies (a checkout set up with uv), else from
    # uv's default index (a checkout set up with pip, as CI's is)
    for extra in (["--offline"], []):
        done = subprocess.run(
            install + extra, capture_output=True, text=True, env=env, check=False, timeout=600
        )
        if done.returncode == 0:
            break
    else:
        pytest.skip(f"uv could not install gpuenv here: {done.stderr[-300:]}")
    assert subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode != 0
    return venv / "bin" / "gpuenv"


def test_lock_and_install_without_pip(no_pip_gpuenv: Path, tmp_path: Path) -> None:
    repos = build_install_repos(tmp_path / "repos")
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    # the lab's mirror is set for pip, in pip's file: gpuenv must find it without pip
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nindex-url = {repos.index}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CONFIG_DIRS=str(tmp_path / "no-xdg"),
        GPUENV_HOME=str(tmp_path / "store"),
        GPUENV_CACHE_DIR=str(tmp_path / "cache"),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(jax_plan("0.4.31").to_json()))
    lockfile = tmp_path / "jax.lock.yml"

    def gpuenv(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(no_pip_gpuenv), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            check=False,
        )

    locked = gpuenv("lock", "--plan", str(plan), "-o", str(lockfile), "--exclude-newer", "none")
    assert locked.returncode == 0, locked.stderr
    text = lockfile.read_text()
    # the files come from the index in pip's file, not from uv's default
    assert f"url: {repos.index.removesuffix('simple/')}files/jax-0.4.31-py3-none-any.whl" in text
    installed = gpuenv("install", str(lockfile), "--prefix", str(tmp_path / "env"), "-q")
    assert installed.returncode == 0, installed.stderr
    version = subprocess.run(
        [str(tmp_path / "env" / "bin" / "python"), "-c", "import jax; print(jax.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == "0.4.31"


def test_the_wheel_ships_the_parsed_knowledge_base(no_pip_gpuenv: Path, tmp_path: Path) -> None:
    """The first run after an install reads the packaged cache, not the recipes' TOML; it
    writes only the files' stamps, so later runs neither read nor hash the TOML either."""
    cache = tmp_path / "empty-cache"
    env = {**os.environ, "GPUENV_CACHE_DIR": str(cache)}
    env.pop("GPUENV_RECIPES", None)
    python = no_pip_gpuenv.parent / "python"
    code = (
        "import sys, gpuenv.recipes as r, gpuenv.recipes.parse as parse, gpuenv.cache as c;"
        "parse.parse_knowledge_base = None;"  # parsing TOML would now fail: the pickle must answer
        "kb = r.load_knowledge_base(); print(kb.digest, c.PACKAGED, 'hashlib' in sys.modules)"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    digest, packaged, hashed = done.stdout.split()
    # keyed by the recipes' digest and the loader's record shape
    assert list((Path(packaged) / "recipes").glob(f"{digest}-*.pickle"))
    assert hashed == "True"
    # no parsed copy was written: only the stamps that find the shipped one again
    written = [p.name for p in (cache / "recipes").iterdir()]
    assert len(written) == 1 and written[0].startswith("stamps-"), written
    again = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split() == [digest, packaged, "False"]
