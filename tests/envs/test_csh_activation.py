"""csh and tcsh expand history (`!`) even inside single quotes: the activation line gpuenv
prints for them must carry a prefix holding `!` (and `'`, `$`, `;`) as itself, read by the
real shell (issue 28). CI installs csh and tcsh (.ci/run); where they are absent, skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuenv.envs.activation import activate_hint
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock

CSH_SHELLS = ("csh", "tcsh")


def _run(shell: str, script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    found = shutil.which(shell)
    if found is None:
        pytest.skip(f"{shell} is not installed")
    return subprocess.run(
        [found, "-f", "-c", script],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("shell", CSH_SHELLS)
def test_the_csh_line_sources_the_script_of_a_prefix_holding_a_bang(
    shell: str, tmp_path: Path
) -> None:
    """The line alone: a stand-in activate.csh that names no path itself (uv's writes the
    prefix into the script, see below), in a folder whose name csh would otherwise take for
    history events (`!1`, `!$`) and commands."""
    work = tmp_path / "work"
    prefix = work / "proj!1 it's !$ $HOME; touch canary"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "activate.csh").write_text('setenv GPUENV_TEST_ACTIVATED "yes"\n')
    line = activate_hint(prefix, "venv", shell, None)
    out = _run(shell, line + ' && printf "%s\\n" "$GPUENV_TEST_ACTIVATED"', work)
    assert not (work / "canary").exists()
    assert out.returncode == 0, (line, out.stderr)
    assert out.stdout == "yes\n"


@pytest.mark.parametrize("shell", CSH_SHELLS)
def test_the_csh_line_activates_a_real_environment(
    shell: str, install_repos: InstallRepos, tmp_path: Path
) -> None:
    """`gpuenv activate --shell csh` on an installed --prefix environment, through the venv's
    own activate.csh. uv writes the path into that script inside single quotes (a `'` as
    `'"'"'`), where csh still expands history when it sources it: gpuenv, which rewrites the
    path to name the prefix rather than its version folder, writes each `!` as `\\!`."""
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    work = tmp_path / "work"
    work.mkdir()
    prefix = work / "proj!1 it's !$ $HOME; touch canary"
    done = gpuenv("install", str(lockfile), "--prefix", str(prefix), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    line = gpuenv("activate", "--prefix", str(prefix), "--shell", shell)
    assert line.returncode == 0, line.stderr
    out = _run(shell, line.stdout.strip() + ' && printf "%s\\n" "$VIRTUAL_ENV"', work)
    assert not (work / "canary").exists()
    assert out.returncode == 0, (line.stdout, out.stderr)
    # the prefix itself, not the version folder it links to (a rebuild deletes that)
    assert out.stdout == f"{prefix}\n"
