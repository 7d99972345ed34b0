"""A shell activated before a rebuild keeps working after it: the venv's activation scripts
name the environment's link, not the version folder a later install deletes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpuenv.envs.activation import point_activation_at
from gpuenv.envs.store import EnvLocation
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_an_activated_bash_follows_the_environment_across_two_rebuilds(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    locks = [
        make_lock(install_repos, tmp_path / f"{v}.lock.yml", jax_plan(v))
        for v in ("0.4.30", "0.4.31")
    ]
    third = tmp_path / "third.lock.yml"
    third.write_text(locks[0].read_text() + "# a third lockfile\n")
    assert gpuenv("install", str(locks[0]), "--name", "lab").returncode == 0
    hook = gpuenv("activate", "-n", "lab", "--shell", "bash")
    assert hook.returncode == 0, hook.stderr
    version = "python -c 'import jax; print(\"V=\" + jax.__version__)'"
    script = (
        f'{hook.stdout.strip()}\n{version}\necho "ENV=$VIRTUAL_ENV"\n'
        f"{gpuenv_cmd('install', str(locks[1]), '--name', 'lab')} >/dev/null\n{version}\n"
        f"{gpuenv_cmd('install', str(third), '--name', 'lab')} >/dev/null\n{version}\n"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"ENV={EnvLocation.named('lab').link}" in lines
    # the shell's python followed each rebuild, the first version folder long deleted
    assert [ln for ln in lines if ln.startswith("V=")] == ["V=0.4.30", "V=0.4.31", "V=0.4.30"]


def gpuenv_cmd(*args: str) -> str:
    import shlex
    import sys

    return " ".join(shlex.quote(a) for a in [sys.executable, "-m", "gpuenv", *args, "-q"])


def test_only_activation_scripts_that_name_the_folder_are_rewritten(tmp_path: Path) -> None:
    env = tmp_path / ".versions" / "lab-0123456789ab"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "activate").write_text(
        f"VIRTUAL_ENV='{env}'\nexport PATH=\"$VIRTUAL_ENV/bin\"\n"
    )
    (env / "bin" / "activate.fish").write_text("set -gx VIRTUAL_ENV (somewhere)\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(f"{env}\n")
    (env / "bin" / "activate.csh").symlink_to(elsewhere)  # a link is never written through
    assert point_activation_at(env, tmp_path / "lab") == 1
    assert (env / "bin" / "activate").read_text().startswith(f"VIRTUAL_ENV='{tmp_path / 'lab'}'")
    assert elsewhere.read_text() == f"{env}\n"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_a_folder_holding_a_quote_is_rewritten_as_uv_quotes_it(tmp_path: Path) -> None:
    """uv writes `'` inside the single-quoted path as `'"'"'`: the script still names the link
    after the rewrite, and bash reads the link's path back as it is."""
    env = tmp_path / ".versions" / "it's lab-0123456789ab"
    (env / "bin").mkdir(parents=True)
    quoted = str(env).replace("'", "'\"'\"'")
    (env / "bin" / "activate").write_text(f"VIRTUAL_ENV='{quoted}'\nexport VIRTUAL_ENV\n")
    link = tmp_path / "it's lab"
    assert point_activation_at(env, link) == 1
    script = f'. "{env}/bin/activate" && printf "%s" "$VIRTUAL_ENV"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == str(link)


def test_a_script_that_does_not_name_the_folder_does_not_stop_the_others(tmp_path: Path) -> None:
    """The scripts are read in order; one that does not name the folder (edited by hand, or
    one uv writes without it) is skipped, and the ones after it are still rewritten."""
    env_dir, link = tmp_path / "versions" / "env-1", tmp_path / "env"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "bin" / "activate").write_text("# nothing about the folder here\n")
    (env_dir / "bin" / "activate.fish").write_text(f"set -gx VIRTUAL_ENV '{env_dir}'\n")
    assert point_activation_at(env_dir, link) == 1
    assert (env_dir / "bin" / "activate.fish").read_text() == f"set -gx VIRTUAL_ENV '{link}'\n"
