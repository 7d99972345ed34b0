"""`--json` on every command: stdout is exactly one JSON document (a stage's artifact, a result
with `gpuenv_json`, or the error object), progress stays on stderr, exit statuses are unchanged.

Each command runs as a user runs it (a separate process), against the local repositories the
install and lab tests build: nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gpuenv.envs.store import EnvLocation, store_root
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, build_install_repos, jax_plan, make_lock
from isolation import isolate_store, only_index

SCHEMA = {"gpuenv_json": 1}
LAPTOP = ("--gpu", "GeForce 940M", "--driver", "457.49", "--os", "linux", "--arch", "x86_64")


@pytest.fixture(scope="session")
def install_repos(tmp_path_factory: pytest.TempPathFactory) -> InstallRepos:
    return build_install_repos(tmp_path_factory.mktemp("json-repos"))


@pytest.fixture(autouse=True)
def private(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    install_repos: InstallRepos,
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
    only_index(monkeypatch, install_repos.index)


def run(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=timeout,
        cwd=cwd,
    )


def document(result: subprocess.CompletedProcess[str]) -> Any:
    """The whole of stdout as JSON: one document and nothing else (json.loads refuses a second
    document or any stray line)."""
    assert "Traceback" not in result.stderr, result.stderr
    try:
        return json.loads(result.stdout)
    except ValueError:
        pytest.fail(f"stdout is not one JSON document:\n{result.stdout}\nstderr:\n{result.stderr}")


def ok_result(result: subprocess.CompletedProcess[str], command: str) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    doc = document(result)
    assert doc.items() >= {**SCHEMA, "command": command, "ok": True}.items(), doc
    assert "exit" not in doc and "error" not in doc
    return dict(doc)


def error_object(result: subprocess.CompletedProcess[str], command: str) -> dict[str, Any]:
    """A failure under --json: the usual one line on stderr, the error object on stdout."""
    assert result.returncode != 0
    doc = document(result)
    assert doc == {
        **SCHEMA,
        "command": command,
        "ok": False,
        "exit": result.returncode,
        "error": doc["error"],
    }
    assert result.stderr.strip().splitlines()[-1] == f"gpuenv: error: {doc['error']}"
    return dict(doc)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plan_file(folder: Path, version: str = "0.4.30") -> Path:
    path = folder / f"plan-{version}.json"
    path.write_text(json.dumps(jax_plan(version).to_json()))
    return path


# -- artifacts keep their shapes --------------------------------------------------------------


def test_resolve_and_detect_print_their_artifacts_unwrapped() -> None:
    plan = document(run("resolve", *LAPTOP, "--json"))
    assert plan["schema"] == 1 and "gpuenv_json" not in plan and "frameworks" in plan
    machine = document(run("detect", "--json"))
    assert "gpuenv_json" not in machine and {"os", "arch", "platform", "gpus"} <= set(machine)


def test_explain_serializes_the_whole_plan_it_explains() -> None:
    doc = ok_result(run("explain", *LAPTOP, "torch", "--json"), "explain")
    plan = document(run("resolve", *LAPTOP, "torch", "--json", "-v"))
    assert doc["plan"] == plan  # everything explain computed, nothing rephrased
    # without -v, resolve lists no rejected candidates (it evaluates no more than it needs)
    assert document(run("resolve", *LAPTOP, "torch", "--json")) == {
        k: v for k, v in plan.items() if k != "rejected"
    }
    assert doc["plan"]["reasons"] and doc["plan"]["rejected"]  # a 940M rules out new releases
    assert {"candidate", "rule", "message"} <= set(doc["plan"]["rejected"][0])


def test_a_failing_resolve_keeps_its_status_and_prints_the_error_object() -> None:
    text = run("resolve", "--gpu", "GeForce 9999", "--os", "linux")
    result = run("resolve", "--gpu", "GeForce 9999", "--os", "linux", "--json")
    assert result.returncode == text.returncode == 2 and text.stdout == ""
    assert "unknown GPU" in error_object(result, "resolve")["error"]


# -- lock -------------------------------------------------------------------------------------


def test_lock_json_then_check(install_repos: InstallRepos, tmp_path: Path) -> None:
    out = tmp_path / "jax.conda-lock.yml"
    lock = ("lock", "--plan", str(plan_file(tmp_path)), "--channel", install_repos.channel)
    first = ok_result(run(*lock, "-o", str(out), "--exclude-newer", "none", "--json"), "lock")
    locked = load_locked(out)
    assert first["lockfile"] == str(out) and first["format"] == "conda-lock"
    assert first["platform"] == "linux-64" and first["accelerator"] == "cpu"
    assert first["frameworks"] == {
        "jax": {"version": "0.4.30", "variant": "cpu", "cuda": None, "cudnn": None}
    }
    assert first["pip_count"] == len(locked.pip) >= 2 and first["conda_count"] == len(locked.conda)
    assert first["inputs_hash"] == locked.inputs_hash
    assert first["lockfile_sha256"] == sha256(out) and first["changed"] is True
    assert first["fallback"] == [] and isinstance(first["notes"], list)
    # the same lock without --json, then with it: the same bytes (--json is not a lock input,
    # nor part of the command a lockfile header records)
    assert run(*lock, "-o", str(out), "--exclude-newer", "none").returncode == 0
    again = ok_result(run(*lock, "-o", str(out), "--exclude-newer", "none", "--json"), "lock")
    assert again["changed"] is False and again["lockfile_sha256"] == first["lockfile_sha256"]

    check = ok_result(
        run(*lock, "-o", str(out), "--exclude-newer", "none", "--check", "--json"), "lock"
    )
    assert check["check"] is True and check["up_to_date"] is True and check["exists"] is True
    assert check["lockfile"] == str(out) and "up to date" in check["reason"]

    newer = (
        "lock",
        "--plan",
        str(plan_file(tmp_path, "0.4.31")),
        "--channel",
        install_repos.channel,
    )
    stale = run(*newer, "-o", str(out), "--exclude-newer", "none", "--check", "--json")
    assert stale.returncode == 1  # as without --json
    doc = document(stale)
    assert doc.items() >= {**SCHEMA, "command": "lock", "ok": False, "exit": 1}.items()
    assert doc["up_to_date"] is False and "0.4.30 [cpu] -> 0.4.31 [cpu]" in doc["reason"]
    assert doc["frameworks"]["jax"]["version"] == "0.4.31"
    assert "stale" in stale.stderr  # the message for people stays on stderr

    missing = run(*lock, "-o", str(tmp_path / "none.yml"), "--check", "--json")
    assert missing.returncode == 1 and document(missing)["exists"] is False


def test_lock_onto_a_fifo_answers_with_the_error_object_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "out.yml"
    os.mkfifo(fifo)
    result = run("lock", "--plan", str(plan_file(tmp_path)), "-o", str(fifo), "--json", timeout=60)
    assert result.returncode == 2
    assert "never replaces a device or a link" in error_object(result, "lock")["error"]


LAB = """
[lab]
name = "json lab"
lockfiles = "locks"

[stack]
requirements = ["{req}"]

[[class]]
name = "pascal"
os = "linux"
compute_capability = "6.0-6.1"
driver = "535.183.01"

[[class]]
name = "cpu"
os = "linux"
gpu = "none"

[[class]]
name = "laptop"
os = "windows"
gpu = "GeForce 940M"
driver = "457.49"
"""


def test_lock_lab_json_per_class_status(tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(textwrap.dedent(LAB).replace("{req}", "jax<0.4.32"))
    first = ok_result(run("lock", "--lab", str(lab), "--json", cwd=tmp_path), "lock")
    assert first["lab"] == str(lab) and first["check"] is False and first["failed"] == 0
    rows = {row["class"]: row for row in first["classes"]}
    assert list(rows) == ["pascal", "cpu", "laptop"]
    for row in rows.values():
        assert row["status"] == "locked" and row["changed"] is True
        assert row["lockfile_sha256"] == sha256(Path(row["lockfile"]))
        assert row["frameworks"]["jax"]["version"] == "0.4.31"
        assert load_locked(Path(row["lockfile"])).inputs_hash == row["inputs_hash"]
    assert rows["laptop"]["platform"] == "win-64"

    # one class's lockfile replaced by a link: that class fails, the others are relocked
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    laptop = Path(rows["laptop"]["lockfile"])
    laptop.unlink()
    laptop.symlink_to(precious)
    result = run("lock", "--lab", str(lab), "--json", cwd=tmp_path)
    doc = document(result)
    assert result.returncode == 2 and doc["exit"] == 2 and doc["ok"] is False
    assert doc["failed"] == 1
    again = {row["class"]: row for row in doc["classes"]}
    assert again["pascal"]["status"] == again["cpu"]["status"] == "locked"
    assert again["pascal"]["changed"] is False  # same inputs, same bytes
    assert again["laptop"]["status"] == "failed" and again["laptop"]["exit"] == 2
    assert "link" in again["laptop"]["error"] and precious.read_text() == "keep"
    assert "FAILED laptop" in result.stderr

    classes = ("--class", "pascal", "--class", "cpu")
    check = ok_result(run("lock", "--lab", str(lab), *classes, "--check", "--json"), "lock")
    assert [(r["class"], r["status"], r["up_to_date"]) for r in check["classes"]] == [
        ("pascal", "up_to_date", True),
        ("cpu", "up_to_date", True),
    ]
    lab.write_text(lab.read_text().replace("jax<0.4.32", "jax<0.4.31"))
    stale = run("lock", "--lab", str(lab), *classes, "--check", "--json")
    doc = document(stale)
    assert stale.returncode == 1 and doc["ok"] is False and doc["exit"] == 1 and doc["failed"] == 2
    assert {r["status"] for r in doc["classes"]} == {"stale"}
    assert all("0.4.31" in r["reason"] and "0.4.30" in r["reason"] for r in doc["classes"])


# -- install, fetch, envs -----------------------------------------------------------------------


def test_install_dry_run_json_says_what_it_would_do(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    dry = ok_result(
        run("install", str(lockfile), "--name", "lab", "--dry-run", "--json"), "install"
    )
    where = EnvLocation.named("lab")
    assert dry["dry_run"] is True and dry["changed"] is True and dry["replaces"] is None
    assert dry["name"] == "lab" and dry["environment"] == str(where.link)
    assert dry["lockfile_sha256"] == sha256(lockfile)
    assert dry["frameworks"]["jax"]["version"] == "0.4.30"
    assert where.current() is None  # nothing was made


def test_install_json_new_then_unchanged_then_removed(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    first = ok_result(run("install", str(lockfile), "--name", "lab", "--json"), "install")
    where = EnvLocation.named("lab")
    assert first["name"] == "lab" and first["environment"] == str(where.link)
    assert first["version_folder"] == str(where.current()) and first["changed"] is True
    assert first["backend"] == "venv" and first["lockfile"] == str(lockfile)
    assert first["lockfile_sha256"] == sha256(lockfile) and first["python"] == jax_plan().python
    assert first["frameworks"]["jax"]["version"] == "0.4.30"
    assert Path(first["interpreter"]).is_file()

    again = ok_result(run("install", str(lockfile), "--name", "lab", "--json"), "install")
    assert again == {**first, "changed": False}
    # --dry-run: one document too; nothing to do is `changed: false`, as without it
    dry = ok_result(
        run("install", str(lockfile), "--name", "lab", "--dry-run", "--json"), "install"
    )
    assert dry == again

    removed = ok_result(run("envs", "remove", "lab", "--json"), "envs remove")
    assert removed == {
        **SCHEMA,
        "command": "envs remove",
        "ok": True,
        "name": "lab",
        "environment": str(where.link),
        "removed": first["version_folder"],
    }
    assert not os.path.lexists(where.link) and not Path(first["version_folder"]).exists()


def test_conda_lock_install_and_fetch_keep_stdout_clean(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    """py-rattler solves, downloads and links here: none of it may reach stdout."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(jax_plan(conda=("cudatoolkit=11.2",)).to_json()))
    out = tmp_path / "conda.conda-lock.yml"
    lock = ok_result(
        run("lock", "--plan", str(plan), "--channel", install_repos.channel, "-o", str(out),
            "--exclude-newer", "none", "--json"),
        "lock",
    )  # fmt: skip
    assert lock["conda_count"] == len(load_locked(out).conda) >= 3
    assert lock["frameworks"]["jax"]["cuda"] == "11.2" and lock["accelerator"] == "cuda"

    env = tmp_path / "env"
    # locked with --channel: installed and fetched with it (the lockfile-origin rule)
    trust = ("--channel", install_repos.channel)
    doc = ok_result(run("install", str(out), "--prefix", str(env), *trust, "--json"), "install")
    assert doc["name"] is None and doc["environment"] == str(env) and doc["backend"] == "conda"
    assert doc["changed"] is True and Path(doc["interpreter"]).is_file()

    house = tmp_path / "house"
    fetched = ok_result(run("fetch", str(out), "-d", str(house), *trust, "--json"), "fetch")
    kinds = {f["name"]: f["kind"] for f in fetched["files"]}
    assert set(kinds) == {p.name for p in house.iterdir()}
    assert {"conda", "pip"} == set(kinds.values())
    for entry in fetched["files"]:
        body = (house / entry["name"]).read_bytes()
        assert (
            entry["sha256"] or entry["md5"]
        )  # every file is named with the hash it was checked against
        assert entry["sha256"] in (None, hashlib.sha256(body).hexdigest())
        assert entry["md5"] in (None, hashlib.md5(body).hexdigest())


def test_a_bad_lockfile_keeps_the_exit_status_and_stdout_parses(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    garbage = tmp_path / "garbage.conda-lock.yml"
    garbage.write_text("version: [1\n")
    text = run("install", str(garbage), "--name", "lab")
    result = run("install", str(garbage), "--name", "lab", "--json")
    assert result.returncode == text.returncode == 2 and text.stdout == ""
    error_object(result, "install")

    good = make_lock(install_repos, tmp_path / "a.conda-lock.yml", jax_plan())
    content = good.read_text()
    sha = next(line.split()[-1] for line in content.splitlines() if "sha256:" in line)
    tampered = tmp_path / "b.conda-lock.yml"
    tampered.write_text(content.replace(sha, "ab" * 32, 1))
    result = run("install", str(tampered), "--name", "lab", "--json")
    assert result.returncode == 1
    assert "does not match the lockfile" in error_object(result, "install")["error"]
    assert not os.path.lexists(EnvLocation.named("lab").link)


def test_fetch_json_lists_every_file(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    dest = tmp_path / "house"
    doc = ok_result(run("fetch", str(lockfile), "-d", str(dest), "--json"), "fetch")
    assert doc["destination"] == str(dest) and doc["lockfile"] == str(lockfile)
    files = {f["name"]: f for f in doc["files"]}
    assert set(files) == {p.name for p in dest.iterdir()} and len(files) >= 2
    for name, entry in files.items():
        assert entry["sha256"] == sha256(dest / name)
        assert entry["size"] == (dest / name).stat().st_size and entry["kind"] == "pip"
    assert doc["total_bytes"] == sum(f["size"] for f in files.values())


def test_fetch_into_a_file_is_an_error_object(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    result = run("fetch", str(lockfile), "-d", str(not_a_folder), "--json")
    assert result.returncode == 2
    error_object(result, "fetch")


def test_envs_clean_json_says_what_it_removed_and_left_alone() -> None:
    versions = store_root() / ".versions"
    leftover = versions / "ghost-0123456789ab"
    leftover.mkdir(parents=True)
    (store_root() / "stray").write_text("not an environment")
    doc = ok_result(run("envs", "clean", "--json"), "envs clean")
    assert doc["removed"] == [
        {"name": "ghost", "path": str(leftover), "reason": "an unfinished build"}
    ]
    assert doc["kept"] == [] and [b["name"] for b in doc["not_touched"]] == ["stray"]
    assert not leftover.exists() and (store_root() / "stray").exists()
    # the group's --json reaches its subcommands
    assert ok_result(run("envs", "--json", "clean"), "envs clean")["removed"] == []


def test_envs_remove_of_what_gpuenv_did_not_make_is_an_error_object(tmp_path: Path) -> None:
    store_root().mkdir(parents=True)
    os.symlink(tmp_path, store_root() / "alias")
    result = run("envs", "remove", "alias", "--json")
    assert (
        result.returncode == 2
        and "leaves this alone" in error_object(result, "envs remove")["error"]
    )
    assert (store_root() / "alias").is_symlink()
    result = run("envs", "--json", "remove", "../escape")
    assert result.returncode == 2
    error_object(result, "envs remove")


# -- cache, recipes, verify ---------------------------------------------------------------------


def test_cache_commands(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert ok_result(run("cache", "dir", "--json"), "cache dir")["path"] == str(cache)
    (cache / "artifacts").mkdir(parents=True)
    (cache / "artifacts" / "a.whl").write_bytes(b"x" * 1000)
    size = ok_result(run("cache", "size", "--json"), "cache size")
    assert size["path"] == str(cache) and size["bytes"]["artifacts"] >= 1000  # the old keys stay
    assert size["total_bytes"] == sum(size["bytes"].values())
    dry = ok_result(run("cache", "clean", "--dry-run", "--json"), "cache clean")
    assert dry["dry_run"] is True and dry["freed_bytes"] >= 1000 and (cache / "artifacts").exists()
    done = ok_result(run("cache", "clean", "--json"), "cache clean")
    assert done["dry_run"] is False and done["freed_bytes"] == dry["freed_bytes"]
    assert not (cache / "artifacts").exists()


def test_recipes_check_json() -> None:
    doc = ok_result(run("recipes", "check", "--json"), "recipes check")
    assert doc["errors"] == 0 and doc["counts"]["frameworks"] >= 3
    assert doc["warnings"] == len(doc["findings"])
    assert all(set(f) == {"level", "where", "message"} for f in doc["findings"])


def test_verify_without_an_environment_is_an_error_object() -> None:
    result = run("verify", "--name", "missing", "--json")
    assert result.returncode == 2
    assert "no gpuenv environment" in error_object(result, "verify")["error"]


# -- the command line itself ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("lock", "--json", "--bogus"),  # an unknown option: the command line never parsed
        ("install", "/nonexistent/x.yml", "--json"),  # --json after the failing argument
        ("explain", "--json", "--python", "3.x"),
    ],
)
def test_usage_errors_under_json(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.returncode == 2
    error_object(result, args[0])


def test_json_that_belongs_to_another_program_is_left_alone() -> None:
    # run has no --json: it is the command's argument; the failure prints no JSON of gpuenv's
    result = run("run", "-n", "missing", "--", "python", "--json")
    assert result.returncode == 2 and result.stdout == ""
    result = run("lock", "--bogus", "--", "--json")  # after `--`: not an option
    assert result.returncode == 2 and result.stdout == ""


def test_a_hostile_name_in_the_error_stays_one_ascii_document(tmp_path: Path) -> None:
    name = tmp_path / 'lock "ü"\n{"ok": true}.yml'  # quotes, non-ASCII, a newline, a fake object
    result = run("install", str(name), "--json")
    assert result.returncode == 2 and result.stdout.isascii()
    doc = document(result)
    assert doc["ok"] is False and doc["exit"] == 2
    assert 'lock "ü"' in doc["error"] and "does not exist" in doc["error"]
