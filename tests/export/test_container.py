"""`gpuenv export LOCKFILE --to dockerfile|apptainer`: a build context that installs exactly the
lockfile's wheels, hash-checked, and imports each framework while the image is built. Built
here for real with podman (`--isolation=chroot`, from a base image made with debootstrap and
imported: no registry is reachable), offline from a wheelhouse; a wheel that is not the
lockfile's fails the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuenv.export.apptainer import definition
from gpuenv.export.recipe import ExportError, recipe_of
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock

BASE = "localhost/gpuenv-test-python:bookworm"
CAN_BUILD = (
    shutil.which("podman") is not None
    and shutil.which("debootstrap") is not None
    and hasattr(os, "geteuid")
    and os.geteuid() == 0
)


@pytest.fixture(scope="session")
def base_image() -> str:
    """Debian bookworm with python3 and venv, imported once into podman's store."""
    if not CAN_BUILD:
        pytest.skip("podman and debootstrap as root are needed to build an image here")
    exists = subprocess.run(["podman", "image", "exists", BASE], check=False)
    if exists.returncode == 0:
        return BASE
    with tempfile.TemporaryDirectory(prefix="gpuenv-rootfs-") as tmp:
        made = subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                "--include=python3,python3-venv",
                "bookworm",
                tmp,
                "http://deb.debian.org/debian",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if made.returncode != 0:
            pytest.skip(f"debootstrap could not make a base image: {made.stderr[-300:]}")
        tar = subprocess.Popen(["tar", "-C", tmp, "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["podman", "import", "-", BASE], stdin=tar.stdout, check=True, timeout=300)
        tar.wait()
    return BASE


@pytest.fixture
def lockfile(install_repos: InstallRepos, tmp_path: Path) -> Path:
    return make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())


def _export(lockfile: Path, context: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return gpuenv("export", str(lockfile), "--to", "dockerfile", "-o", str(context), *extra)


def _build(context: Path, tag: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", "build", "--isolation=chroot", "-t", tag, str(context)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_dockerfile_builds_and_imports_the_stack(
    lockfile: Path, tmp_path: Path, base_image: str
) -> None:
    house = tmp_path / "wheelhouse"
    assert gpuenv("fetch", str(lockfile), "-d", str(house)).returncode == 0
    context = tmp_path / "ctx"
    done = _export(lockfile, context, "--from", str(house), "--base", base_image)
    assert done.returncode == 0, done.stderr
    built = _build(context, "localhost/gpuenv-export-test:ok")
    try:
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        assert "ok  jax 0.4.30" in built.stdout + built.stderr  # the check ran in the build
    finally:
        subprocess.run(["podman", "rmi", "-f", "localhost/gpuenv-export-test:ok"], check=False)


def test_a_wheel_that_is_not_the_lockfiles_fails_the_build(
    lockfile: Path, tmp_path: Path, base_image: str
) -> None:
    house = tmp_path / "wheelhouse"
    assert gpuenv("fetch", str(lockfile), "-d", str(house)).returncode == 0
    context = tmp_path / "ctx"
    assert _export(lockfile, context, "--from", str(house), "--base", base_image).returncode == 0
    jax_wheel = next((context / "wheels").glob("jax-*.whl"))
    jax_wheel.write_bytes(jax_wheel.read_bytes() + b"tampered")  # after export, before build
    built = _build(context, "localhost/gpuenv-export-test:bad")
    subprocess.run(["podman", "rmi", "-f", "localhost/gpuenv-export-test:bad"], check=False)
    assert built.returncode != 0
    assert "hash" in (built.stdout + built.stderr).lower()


def test_export_refuses_a_tampered_wheelhouse(lockfile: Path, tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    assert gpuenv("fetch", str(lockfile), "-d", str(house)).returncode == 0
    wheel = next(w for w in house.glob("*.whl") if not w.name.startswith("jax-"))
    wheel.write_bytes(b"not the wheel")
    done = _export(lockfile, tmp_path / "ctx", "--from", str(house))
    assert done.returncode != 0 and "sha256" in done.stderr and "Traceback" not in done.stderr


def test_without_a_wheelhouse_every_line_carries_its_hash(lockfile: Path, tmp_path: Path) -> None:
    done = _export(lockfile, tmp_path / "ctx")
    assert done.returncode == 0, done.stderr
    assert "note: no --base given: built on python:3." in done.stderr
    lines = [
        line
        for line in (tmp_path / "ctx" / "gpuenv-requirements.txt").read_text().splitlines()
        if line and not line.startswith(("#", "--"))
    ]
    locked = load_locked(lockfile)
    assert len(lines) == len(locked.pip)
    for entry in locked.pip:
        assert any(f"--hash=sha256:{entry.sha256}" in line and entry.name in line for line in lines)
    dockerfile = (tmp_path / "ctx" / "Dockerfile").read_text()
    assert "FROM python:3." in dockerfile and "--require-hashes" in dockerfile


def test_apptainer_definition_installs_the_same_list(lockfile: Path) -> None:
    recipe = recipe_of(load_locked(lockfile), None)
    text = definition(recipe, "python:3.11-slim", lockfile.name)
    assert text.startswith("Bootstrap: docker\nFrom: python:3.11-slim\n")
    assert "--require-hashes" in text and "gpuenv-check.py jax" in text
    assert "%test" in text


def test_what_cannot_be_exported_is_one_message(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    conda = make_lock(
        install_repos, tmp_path / "c.conda-lock.yml", jax_plan(conda=("cudatoolkit=11.2",))
    )
    with pytest.raises(ExportError, match="conda packages"):
        recipe_of(load_locked(conda), None)
    done = gpuenv("export", str(conda), "--to", "apptainer", "-o", str(tmp_path / "x"))
    assert done.returncode == 2 and "conda packages" in done.stderr
    usage = gpuenv("export", "--to", "dockerfile", "-o", str(tmp_path / "y"))
    assert usage.returncode == 2 and "LOCKFILE" in usage.stderr


def test_a_url_with_credentials_never_goes_into_a_recipe(lockfile: Path, tmp_path: Path) -> None:
    import dataclasses

    from gpuenv.export.recipe import requirements_text

    locked = load_locked(lockfile)
    entry = dataclasses.replace(
        locked.pip[0], url="https://alice:s3cret@mirror.example/files/" + locked.pip[0].filename
    )
    secret = dataclasses.replace(locked, pip=(entry, *locked.pip[1:]))
    with pytest.raises(ExportError, match="credentials") as refused:
        requirements_text(secret, offline=False)
    assert "s3cret" not in str(refused.value)
    assert "s3cret" not in requirements_text(secret, offline=True)  # by name from a wheelhouse
