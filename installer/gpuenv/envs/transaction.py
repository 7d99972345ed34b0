"""Install a locked environment: fetch and check everything, build beside the old environment,
smoke-test, then swap the link in one atomic rename. The core only orders the steps; where the
files come from (artifacts) and how the folder is filled (backends) live elsewhere.

Killed at any moment, the old environment still works: until the swap its link is untouched, and
a half-built folder has no metadata, so the next run removes and rebuilds it.
"""

from __future__ import annotations

import datetime as dt
import os
import platform as host
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from gpuenv.envs.errors import InstallError
from gpuenv.envs.filelock import exclusive
from gpuenv.envs.store import EnvLocation, interpreter, read_metadata, write_metadata
from gpuenv.machine import conda_platform

if TYPE_CHECKING:  # up_to_date, setup's no-op check, must not pay for the lockfile stack
    from gpuenv.envs.artifacts import LocalArtifact
    from gpuenv.lock.lockfile import LockedEnvironment

Say = Callable[[str], None]
Check = Callable[[Path], Optional[str]]


@dataclass(frozen=True)
class InstallResult:
    changed: bool
    env_dir: Path
    link: Path
    python: Path
    backend: str


def up_to_date(lockfile_sha256: str, location: EnvLocation) -> Optional[Path]:
    """The environment's folder if it was built from exactly this lockfile (by content hash:
    cheap enough to decide a no-op before the lockfile is even parsed)."""
    current = location.current()
    if current and read_metadata(current).get("lockfile_sha256") == lockfile_sha256:
        return current
    return None


def install(
    locked: LockedEnvironment,
    location: EnvLocation,
    files: list[LocalArtifact],
    *,
    uv: str,
    smoke: bool = True,
    say: Say = lambda _: None,
    check: Optional[Check] = None,
) -> InstallResult:
    """`check`, when given, replaces the smoke test: it runs with the new environment's
    interpreter before the swap (setup's verify, so the frameworks are imported once, not
    twice) and returns why the environment must not be switched to, or None."""
    from gpuenv.envs import backends

    check_platform(locked)
    with exclusive(location.lock_path):
        current = up_to_date(locked.content_sha256, location)  # another install may have won
        if current:
            return _result(False, current, location)
        if location.link.exists() and location.current() is None:
            raise InstallError(
                f"{location.link} exists and is not a gpuenv environment; choose another --prefix"
            )
        target = location.version_dir(locked.content_sha256)
        if target.exists():
            say(f"removing an unfinished build at {target}")
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            backend = _build(locked, target, files, uv, say)
            if check is not None:
                error = check(interpreter(target))
                if error:
                    raise InstallError(f"the new environment failed its check:\n{error}")
            elif smoke:
                say("checking that the frameworks import")
                error = backends.smoke_test(interpreter(target), list(locked.plan.frameworks))
                if error:
                    raise InstallError(
                        f"the new environment does not import its frameworks:\n{error}"
                    )
            write_metadata(target, _metadata(locked, location, backend))
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        previous = location.current()
        _swap(location.link, target)
        if previous and previous != target:
            shutil.rmtree(previous, ignore_errors=True)
        return _result(True, target, location)


def check_platform(locked: LockedEnvironment) -> None:
    """Refuse a lockfile made for another platform before anything is downloaded."""
    system = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}.get(host.system(), "")
    here = conda_platform(system, host.machine()) if system else "unknown"
    if here != locked.platform:
        raise InstallError(
            f"{locked.path} is for {locked.platform}; this machine is {here}. Lock for this"
            " machine (`gpuenv lock`), or use the lab lockfile of its class."
        )


def _build(
    locked: LockedEnvironment, target: Path, files: list[LocalArtifact], uv: str, say: Say
) -> str:
    from gpuenv.envs import backends, windows

    conda = [f for f in files if f.artifact.kind == "conda"]
    wheels = [f for f in files if f.artifact.kind == "pip"]
    if conda:
        say(f"installing {len(conda)} conda packages")
        python = backends.create_conda(target, conda, locked.platform)
        backend = "conda"
    else:
        say(f"creating a Python {locked.python} environment")
        python = backends.create_venv(target, locked.python, uv)
        backend = "venv"
    say(f"installing {len(wheels)} wheels")
    backends.install_wheels(python, wheels, uv)
    if locked.platform.startswith("win"):
        windows.write_dll_pth(target)
    if backend == "conda":
        windows.write_activation_scripts(target, windows=locked.platform.startswith("win"))
    return backend


def _metadata(locked: LockedEnvironment, location: EnvLocation, backend: str) -> dict[str, object]:
    plan = locked.plan
    return {
        "name": location.name,
        "lockfile": str(locked.path.resolve()),
        "lockfile_sha256": locked.content_sha256,
        "inputs_hash": locked.inputs_hash,
        "platform": locked.platform,
        "python": plan.python,
        "backend": backend,
        "accelerator": plan.accelerator,
        "stack": {n: f"{f.version} [{f.variant}]" for n, f in plan.frameworks.items()},
        "plan": plan.to_json(with_rejected=False),
        "installed_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _swap(link: Path, target: Path) -> None:
    """Point `link` at `target`: one atomic rename on POSIX; a junction swap on Windows."""
    tmp = link.with_name(f".{link.name}.new-link")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    if sys.platform == "win32":
        import _winapi

        _winapi.CreateJunction(str(target), str(tmp))
        if link.exists():
            old = link.with_name(f".{link.name}.old-link")
            os.replace(link, old)
            os.replace(tmp, link)
            os.rmdir(old)
        else:
            os.replace(tmp, link)
        return
    os.symlink(target, tmp, target_is_directory=True)
    os.replace(tmp, link)


def _result(changed: bool, env_dir: Path, location: EnvLocation) -> InstallResult:
    backend = str(read_metadata(env_dir).get("backend", ""))
    return InstallResult(changed, env_dir, location.link, interpreter(env_dir), backend)
