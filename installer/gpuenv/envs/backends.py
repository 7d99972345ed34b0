"""Building an environment's contents in a folder: a venv (uv) or a conda prefix (py-rattler),
then the pip part (uv, `--require-hashes --no-deps --no-build`).

uv downloads the wheels into its own cache and refuses any whose sha256 differs from the
lockfile's: that cache holds the only copy. py-rattler links conda packages from gpuenv's checked
copies (see gpuenv.envs.artifacts for why it does not download them itself). A mismatch is
reported as the lockfile's hash failing, before the new environment goes live."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Optional

from gpuenv.cache import kind_dir
from gpuenv.conda.client import CondaError, run_rattler
from gpuenv.envs.artifacts import InstallSource
from gpuenv.envs.errors import HashMismatchError, InstallError
from gpuenv.envs.store import interpreter
from gpuenv.fs.workdir import uv_workdir
from gpuenv.index.origin import carries_secret

UV_TIMEOUT = 1800.0
FRAMEWORK_MODULES = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


def create_venv(env_dir: Path, python: str, uv: str, base: Optional[Path] = None) -> Path:
    """A venv on a Python of the lockfile's version: `base` (the interpreter
    check_python_available found), or the one uv finds or downloads for the version."""
    with uv_workdir("venv") as work:
        done = _run(
            [uv, "venv", str(env_dir), "--python", str(base or python), "--no-project", "--quiet"],
            work,
        )
    if done.returncode != 0:
        raise InstallError(
            f"could not create a Python {python} environment: {_tail(done.stderr)}\n"
            f"Install Python {python}, or let uv provide it (`uv python install {python}`), or"
            " lock for a Python this machine has (`gpuenv lock --python X.Y`)."
        )
    return interpreter(env_dir)


def create_conda(env_dir: Path, conda: list[InstallSource], platform: str) -> Path:
    """A conda prefix from gpuenv's checked copies of the lockfile's packages (py-rattler
    extracts them into its cache, in gpuenv's cache folder, and links them in)."""
    records = []
    for source in conda:
        record = dict(source.artifact.record or {})
        record["url"] = source.url
        record["channel"] = source.url.rsplit("/", 1)[0]
        records.append(record)
    try:
        run_rattler(
            {
                "op": "install",
                "records": records,
                "prefix": str(env_dir),
                "platform": platform,
                "cache_dir": str(kind_dir("rattler")),  # refused if a planted link
            }
        )
    except CondaError as exc:
        if "hash mismatch" in str(exc).lower():  # a defence: the copies were checked already
            raise HashMismatchError(_mismatch("py-rattler", str(exc))) from exc
        raise InstallError(f"could not install the conda packages: {exc}") from exc
    return interpreter(env_dir)


def install_wheels(python: Path, wheels: list[InstallSource], uv: str) -> None:
    """uv downloads (or reads) each wheel, checks it against the lockfile's sha256 and installs
    it; it builds nothing (`--no-build`) and reads no index (`--no-index`: every line is a URL).
    With only local files it does not touch the network at all."""
    if not wheels:
        return
    if any(carries_secret(w.url) for w in wheels):  # gpuenv.envs.artifacts.gather's promise
        raise InstallError("a wheel URL with credentials is never written to uv's requirement list")
    lines = [f"{w.artifact.name} @ {w.url} --hash=sha256:{w.artifact.sha256}" for w in wheels]
    offline = ["--offline"] if all(w.is_local for w in wheels) else []
    from gpuenv.envs.uv_progress import shows_progress

    quiet = [] if shows_progress() else ["--quiet"]  # uv's bars on a terminal, else silence
    with uv_workdir("install") as tmp:
        reqs = tmp / "requirements.txt"
        reqs.write_text("\n".join(lines) + "\n", encoding="utf-8")
        done = _run(
            [
                uv,
                "pip",
                "install",
                "--python",
                str(python),
                "--no-deps",
                "--require-hashes",
                "--no-build",
                "--no-index",
                *offline,
                *quiet,
                "-r",
                str(reqs),
            ],
            tmp,
        )
    if done.returncode != 0:
        if "hash mismatch" in done.stderr.lower():
            raise HashMismatchError(_mismatch("uv", done.stderr))
        raise InstallError(f"uv could not install the wheels: {_tail(done.stderr)}")


_UV_MISMATCH = re.compile(
    r"Hash mismatch for `(?P<what>[^`]+)`.*?Expected:\s*(?P<expected>\S+).*?Computed:\s*(?P<computed>\S+)",
    re.S,
)


def _mismatch(tool: str, detail: str) -> str:
    """One paragraph, like every gpuenv error: which file, both hashes, what it means."""
    found = _UV_MISMATCH.search(detail)
    if found:
        what = " ".join(found.group("what").split())  # uv wraps it to $COLUMNS
        said = (
            f"{what}: {found.group('computed')} does not match the lockfile's"
            f" {found.group('expected')} (checked by {tool})"
        )
    else:
        said = f"a downloaded file does not match the lockfile's sha256 ({tool}: {' '.join(_tail(detail).split())})"
    return (
        f"{said}; the file at that URL changed, or the lockfile was altered. The environment was"
        " not changed."
    )


def smoke_test(python: Path, frameworks: list[str], timeout: float = 300.0) -> Optional[str]:
    """Import each framework with the environment's own interpreter; the error, if any."""
    modules = [FRAMEWORK_MODULES[f] for f in frameworks if f in FRAMEWORK_MODULES]
    if not modules:
        return None
    code = "; ".join(f"import {m}" for m in modules)
    try:
        # -I: the user's working folder is not on sys.path, so a planted jax.py there is not
        # what is imported (nor PYTHON* variables, nor the user's site-packages)
        done = subprocess.run(
            [str(python), "-I", "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"importing {', '.join(modules)} took more than {timeout:.0f}s"
    return None if done.returncode == 0 else _tail(done.stderr)


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """uv, run in one of gpuenv's own work folders (see fs.workdir.uv_workdir)."""
    from gpuenv.envs.uv_progress import run_uv
    from gpuenv.output import log_command

    log_command(cmd)
    try:
        return run_uv(cmd, cwd, UV_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"{cmd[0]} {cmd[1]} did not finish in {UV_TIMEOUT:.0f}s") from exc


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
