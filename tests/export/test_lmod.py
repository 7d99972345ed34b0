"""`gpuenv export --name ENV --to lmod`: a modulefile that Debian's Lmod loads, after which
`python` is the environment's, and unloading takes it away again; names and paths that could
break out of a Lua string are quoted so they cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.envs.store import EnvLocation
from gpuenv.export.lmod import lua_string
from gpuenv.export.recipe import ExportError
from installrepos import gpuenv
from storehelpers import fake_env

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")


def _environment(name: str) -> Path:
    """A store environment with a real interpreter (a venv, no pip: quick)."""
    version = fake_env(name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(version)], check=True)
    return EnvLocation.named(name).link


@pytest.mark.skipif(not LMOD_INIT.is_file(), reason="Lmod is not installed (apt-get install lmod)")
def test_module_load_runs_the_environments_python(tmp_path: Path) -> None:
    link = _environment("lab")
    out = tmp_path / "modules" / "lab.lua"
    done = gpuenv("export", "--name", "lab", "--to", "lmod", "-o", str(out))
    assert done.returncode == 0, done.stderr
    script = (
        f"source {LMOD_INIT}; module use {out.parent}; module load lab;"
        " python -c 'import sys; print(sys.prefix)'; echo \"VENV=$VIRTUAL_ENV\";"
        ' module unload lab; echo "AFTER=$VIRTUAL_ENV"; command -v python || echo none'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MODULEPATH")}
    ran = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    prefix, venv, after, python_after = ran.stdout.strip().splitlines()[-4:]
    assert os.path.realpath(prefix) == os.path.realpath(link)
    assert venv == f"VENV={link}"  # the stable link: a rebuild keeps the module working
    assert after == "AFTER="
    assert os.path.realpath(python_after) != os.path.realpath(link / "bin" / "python")


def test_an_environment_that_is_not_there_is_one_message(tmp_path: Path) -> None:
    done = gpuenv("export", "--name", "ghost", "--to", "lmod", "-o", str(tmp_path / "g.lua"))
    assert done.returncode != 0 and "no environment 'ghost'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "g.lua").exists()
    bad = gpuenv("export", "--name", "../x", "--to", "lmod", "-o", str(tmp_path / "x.lua"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("text", ["a]]b", "]=]x]]", "plain"])
def test_lua_strings_cannot_be_closed_from_inside(text: str) -> None:
    quoted = lua_string(text)
    opener = quoted[: quoted.index("[", 1) + 1]
    closer = opener.replace("[", "]")
    assert quoted == f"{opener}{text}{closer}" and closer not in text


def test_a_line_break_cannot_go_into_a_modulefile() -> None:
    with pytest.raises(ExportError):
        lua_string("evil\nos.execute('x')")


@pytest.mark.skipif(shutil.which("lua5.3") is None, reason="no Lua interpreter")
def test_lua_reads_back_what_was_quoted(tmp_path: Path) -> None:
    text = "a]]b]=]c"
    script = tmp_path / "t.lua"
    script.write_text(f"io.write({lua_string(text)})")
    assert subprocess.run(["lua5.3", str(script)], capture_output=True, text=True).stdout == text
