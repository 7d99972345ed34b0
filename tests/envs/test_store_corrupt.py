"""One corrupt store entry breaks neither `envs`, `doctor` nor `verify` for the others."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpuenv.envs.errors import CorruptEnvironment
from gpuenv.envs.inventory import scan_store
from gpuenv.envs.store import EnvLocation, read_metadata
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock
from storehelpers import envs_json, fake_env, fake_metadata, store

CORRUPT_METADATA: dict[str, Any] = {
    "notjson": b"{not json",
    "alist": b"[1, 2]",
    "astring": b'"hello"',
    "binary": b"\xff\xfe\x00",
    "stackstr": json.dumps({**fake_metadata("x"), "stack": "jax"}).encode(),
    "stackints": json.dumps({**fake_metadata("x"), "stack": {"jax": 1}}).encode(),
    "planlist": json.dumps({**fake_metadata("x"), "plan": ["x"]}).encode(),
    "badsha": json.dumps({**fake_metadata("x"), "lockfile_sha256": "../../x"}).encode(),
    "pythonint": json.dumps({**fake_metadata("x"), "python": 3}).encode(),
    "platformword": json.dumps({**fake_metadata("x"), "platform": "bogus"}).encode(),
    "platformnul": json.dumps({**fake_metadata("x"), "platform": "linux-64\x00"}).encode(),
    "platformlong": json.dumps({**fake_metadata("x"), "platform": "linux-" + "6" * 5000}).encode(),
}


def make_corrupt_store(tmp_path: Path) -> set[str]:
    """Every kind of corrupt entry; returns their names."""
    for name, raw in CORRUPT_METADATA.items():
        fake_env(name, raw=raw)
    nometa = fake_env("nometa")
    (nometa / "gpuenv-env.json").unlink()
    dangling = fake_env("dangling")
    for path in sorted(dangling.rglob("*"), reverse=True):
        path.unlink()
    dangling.rmdir()
    (store() / "stray.txt").write_text("a stray file")
    (store() / "folder").mkdir()
    (store() / "bad name").symlink_to(tmp_path, target_is_directory=True)
    (store() / "outside").symlink_to(tmp_path, target_is_directory=True)
    (store() / ".versions" / "junk").write_text("not a version")
    return {*CORRUPT_METADATA, "nometa", "dangling", "stray.txt", "folder", "bad name", "outside"}


@pytest.mark.parametrize("name", sorted(CORRUPT_METADATA))
def test_metadata_is_validated(name: str) -> None:
    version = fake_env(name, raw=CORRUPT_METADATA[name])
    with pytest.raises(CorruptEnvironment, match=r"gpuenv-env\.json"):
        read_metadata(version)


def test_a_corrupt_store_lists_the_good_and_the_broken(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    assert gpuenv("install", str(lockfile), "--name", "good").returncode == 0
    broken = make_corrupt_store(tmp_path)

    scan = scan_store()
    assert [e.name for e in scan.envs] == ["good"]
    assert {b.name for b in scan.broken} == broken
    assert all(b.reason for b in scan.broken)

    text = gpuenv("envs")
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert text.stdout.splitlines()[1].startswith("good ") and text.stdout.count("BROKEN") == len(
        broken
    )
    assert "not JSON" in text.stdout and "dangling" in text.stdout

    listed = envs_json(gpuenv("envs", "--json").stdout)
    assert [e["name"] for e in listed if e["status"] == "ok"] == ["good"]
    assert {e["name"] for e in listed if e["status"] == "broken"} == broken

    doctor = gpuenv("doctor", "--json", "--no-verify")
    assert "Traceback" not in doctor.stderr
    data = json.loads(doctor.stdout)
    assert doctor.returncode == 1  # broken entries are problems, reported
    assert {e["name"] for e in data["environments"]} == {"good"} | broken
    flagged = {f["subject"]: f for f in data["problems"] if f["code"] == "broken-entry"}
    assert set(flagged) == broken
    assert "reinstall" in flagged["notjson"]["fix"][0]  # gpuenv's own link: reinstall it
    assert "did not make it" in flagged["outside"]["fix"][0]  # not gpuenv's: left alone
    assert "BROKEN" in gpuenv("doctor", "--no-verify").stdout

    verified = gpuenv("verify", "--name", "good", "--timeout", "60")
    assert "Traceback" not in verified.stderr and verified.returncode in (0, 1)
    assert "jax" in verified.stdout  # verify ran on the good one
    for name in ("notjson", "planlist", "nometa", "dangling", "folder", "outside"):
        bad = gpuenv("verify", "--name", name)
        assert bad.returncode == 2, (name, bad.stderr)
        assert "Traceback" not in bad.stderr and bad.stderr.strip()
    assert "not JSON" in gpuenv("verify", "--name", "notjson").stderr


def test_install_replaces_an_environment_whose_metadata_is_corrupt(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    assert gpuenv("install", str(lockfile), "--name", "lab").returncode == 0
    version = EnvLocation.named("lab").current()
    assert version is not None
    (version / "gpuenv-env.json").write_text("[]")  # corrupt, same lockfile hash
    again = gpuenv("install", str(lockfile), "--name", "lab")
    assert again.returncode == 0, again.stderr
    now = EnvLocation.named("lab").current()
    assert now is not None and read_metadata(now)["stack"] == {"jax": "0.4.30 [cpu]"}
    assert not version.exists()  # the corrupt version was retired, inside the store


def test_an_unreadable_store_is_an_empty_list(tmp_path: Path) -> None:
    os.makedirs(store().parent, exist_ok=True)
    store().write_text("the store path is a file")
    result = gpuenv("envs")
    assert result.returncode == 0 and "no environments yet" in result.stdout


@pytest.mark.parametrize("platform", ["bogus", "linux-64\x00", "Linux-64", "linux-" + "6" * 5000])
@pytest.mark.parametrize("backend", ["conda", "venv"])
def test_a_bad_platform_is_one_message_for_activate_and_run(platform: str, backend: str) -> None:
    # hostile round four: `activate` of a conda environment whose metadata names a platform
    # rattler cannot parse was a traceback; `run` went ahead on metadata that is not gpuenv's
    fake_env("bad", metadata={**fake_metadata("bad"), "platform": platform, "backend": backend})
    fake_env("good")
    for args in (["activate", "-n", "bad", "--shell", "bash"], ["run", "-n", "bad", "--", "true"]):
        out = gpuenv(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert "Traceback" not in out.stderr and out.stdout == ""
        [message] = out.stderr.strip().splitlines()
        assert "'platform'" in message and "gpuenv-env.json" in message
        assert "\x00" not in message and len(message) < 400
    fine = gpuenv("activate", "-n", "good", "--shell", "bash")
    assert fine.returncode == 0 and "activate" in fine.stdout


def test_the_store_scan_counts_sizes_only_when_asked() -> None:
    env = fake_env("sized")
    (env / "payload.bin").write_bytes(b"x" * 4096)
    [sized] = scan_store(sizes=True).envs
    assert sized.size >= 4096
    [unsized] = scan_store(sizes=False).envs
    assert unsized.size == 0
