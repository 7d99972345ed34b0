"""One cache: uv downloads and hash-checks the wheels, py-rattler the http(s) conda packages, and
their caches hold the only copy; gpuenv copies (and checks) only `file://` conda packages. The
lockfile's sha256 stays the only authority on bytes, a Python that cannot be had stops install
and setup before anything is downloaded, and `cache clean` leaves uv's cache alone.

Real uv and py-rattler, against the local test repositories served on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import http.server
import json
import os
import stat
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuenv.detect as detect_module
import gpuenv.envs.artifacts as artifacts_module
import gpuenv.envs.python_check as python_check
import gpuenv.index.config as indexes_module
import gpuenv.lock as lock_module
import gpuenv.setup.planning as setup_planning
from gpuenv.cli import main
from gpuenv.envs.artifacts import Artifact, gather
from gpuenv.envs.python_check import PythonUnavailable, check_python_available
from gpuenv.envs.store import EnvLocation, interpreter, store_root
from gpuenv.fs.safe_paths import UnsafePathError
from gpuenv.lock.load import load_locked
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import load_knowledge_base
from gpuenv.setup.planning import SetupPlan
from installrepos import PY, InstallRepos, gpuenv, jax_plan, make_lock, run_in
from isolation import record_uv_calls
from lockdata import dump, load, package, write_for_wheels, write_valid
from loopback import loopback

JAX = "jax-0.4.30-py3-none-any.whl"
NUMPY = "numpy-1.26.4-py3-none-any.whl"


@contextlib.contextmanager
def counting_server(root: Path) -> Iterator[tuple[str, Counter[str]]]:
    """Serve `root` on 127.0.0.1 (GET and HEAD); count the GETs of each path."""
    hits: Counter[str] = Counter()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            hits[self.path] += 1
            super().do_GET()

    with loopback(Handler) as url:
        yield url, hits


@pytest.fixture
def uv_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A uv cache of this test's own, so what lands in it is this test's doing."""
    folder = tmp_path / "uv-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(folder))
    return folder


def gpuenv_cache() -> Path:
    return Path(os.environ["GPUENV_CACHE_DIR"])


def files_in(folder: Path, pattern: str = "*") -> list[Path]:
    return [p for p in folder.rglob(pattern) if p.is_file()] if folder.exists() else []


def jax_version(name: str) -> str:
    current = EnvLocation.named(name).current()
    assert current is not None
    return run_in(interpreter(current), "import jax; print(jax.__version__)")


def wheel_lock(install_repos: InstallRepos, path: Path, base: str = "", **kw: Any) -> Path:
    wheels = [install_repos.wheels / JAX, install_repos.wheels / NUMPY]
    return write_for_wheels(path, wheels, base_url=base, **kw)


def alter_sha(lockfile: Path, name: str, sha: str = "ab" * 32) -> Path:
    data = load(lockfile)
    package(data, name)["hash"]["sha256"] = sha
    return dump(data, lockfile)


# --- wheels: uv downloads, checks and keeps them ---------------------------------------------


def test_wheels_live_only_in_uv_cache_and_a_second_install_downloads_nothing(
    install_repos: InstallRepos, tmp_path: Path, uv_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with counting_server(install_repos.wheels) as (base, hits):
        monkeypatch.setenv("PIP_FIND_LINKS", base)  # the user's settings name that server
        lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml", base)
        first = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
        assert first.returncode == 0, first.stderr
        assert hits[f"/{JAX}"] >= 1 and hits[f"/{NUMPY}"] >= 1  # uv fetched them itself
        fetched = sum(hits.values())
        second = gpuenv("install", str(lockfile), "--name", "lab2", "--no-smoke-test")
        assert second.returncode == 0, second.stderr
        assert sum(hits.values()) == fetched  # uv's cache served the second install
    assert files_in(gpuenv_cache(), "*.whl") == []  # no second copy beside uv's
    assert not (gpuenv_cache() / "artifacts").exists()
    cached = {p.name for p in uv_cache.rglob("*.dist-info")}
    assert {"jax-0.4.30.dist-info", "numpy-1.26.4.dist-info"} <= cached
    assert jax_version("lab") == jax_version("lab2") == "0.4.30"


@pytest.mark.parametrize("where", ["http", "file"])
def test_an_altered_hash_is_refused_even_with_the_file_in_uv_cache(
    where: str,
    install_repos: InstallRepos,
    tmp_path: Path,
    uv_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with counting_server(install_repos.wheels) as (base, _):
        monkeypatch.setenv("PIP_FIND_LINKS", f"{base} {install_repos.wheels}")
        lockfile = wheel_lock(
            install_repos, tmp_path / "a.lock.yml", base if where == "http" else ""
        )
        good = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
        assert good.returncode == 0, good.stderr
        old = EnvLocation.named("lab").current()
        alter_sha(lockfile, "jax")  # the same URL, a file uv has cached, another hash
        bad = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert bad.returncode == 1, bad.stderr
    assert "does not match the lockfile" in bad.stderr and "Traceback" not in bad.stderr
    assert "ab" * 32 in bad.stderr  # uv's own words say which hash it expected
    assert EnvLocation.named("lab").current() == old and jax_version("lab") == "0.4.30"
    versions = EnvLocation.named("lab").versions
    assert [p for p in versions.iterdir() if p.is_dir()] == [old]  # the failed build is gone


def test_a_replaced_file_on_the_server_is_refused(
    install_repos: InstallRepos, tmp_path: Path, uv_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    for name in (JAX, NUMPY):
        (served / name).write_bytes((install_repos.wheels / name).read_bytes())
    with counting_server(served) as (base, _):
        monkeypatch.setenv("PIP_FIND_LINKS", base)
        lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml", base)
        (served / JAX).write_bytes(
            (install_repos.wheels / "jax-0.4.31-py3-none-any.whl").read_bytes()
        )
        bad = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert bad.returncode == 1 and "does not match the lockfile" in bad.stderr, bad.stderr
    assert EnvLocation.named("lab").current() is None


# --- conda: gpuenv checks every package; py-rattler's cache is not trusted with a hash --------


def _conda_lock(install_repos: InstallRepos, path: Path, channel: str) -> Path:
    plan = jax_plan("0.4.30", conda=("cudatoolkit=11.2",))
    return make_lock(install_repos, path, plan, channels=(channel,))


def test_an_altered_conda_hash_is_refused_every_time_with_a_warm_cache(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """py-rattler 0.28 refuses an altered sha256 for an http(s) package once, then records it
    against its cached copy and installs that copy on the next try. gpuenv checks the bytes
    itself, so the second, third and a fresh try are refused too."""
    channel_root = Path(install_repos.channel[len("file://") :])
    with counting_server(channel_root) as (base, hits):
        monkeypatch.setenv("GPUENV_CHANNELS", base)  # the user trusts that channel
        lockfile = _conda_lock(install_repos, tmp_path / "c.lock.yml", base.rstrip("/"))
        assert f"url: {base}" in lockfile.read_text()  # http URLs, not file://
        env = tmp_path / "env"
        good = gpuenv("install", str(lockfile), "--prefix", str(env), "--no-smoke-test")
        assert good.returncode == 0, good.stderr
        assert any(path.endswith(".tar.bz2") for path in hits)
        alter_sha(lockfile, "cudatoolkit")
        tries = [
            gpuenv("install", str(lockfile), "--prefix", str(where), "--no-smoke-test")
            for where in (env, env, tmp_path / "new")
        ]
    for result in tries:
        assert result.returncode == 1, result.stderr
        assert "does not match the lockfile" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "new").exists()
    assert run_in(env / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.30"


def test_a_file_conda_package_is_copied_and_checked_by_gpuenv(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = _conda_lock(install_repos, tmp_path / "c.lock.yml", install_repos.channel)
    done = gpuenv("install", str(lockfile), "--prefix", str(tmp_path / "env"), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    copies = files_in(gpuenv_cache() / "artifacts")
    assert sorted(p.name for p in copies if p.name.startswith("cudatoolkit")) == [
        "cudatoolkit-11.2.2-h_0.tar.bz2"
    ]
    assert all(hashlib.sha256(p.read_bytes()).hexdigest() == p.parent.name for p in copies)
    assert files_in(gpuenv_cache(), "*.whl") == []  # the wheels went to uv, file:// or not


# --- offline from a wheelhouse ----------------------------------------------------------------


def test_offline_install_reads_the_wheelhouse_in_place_and_checks_it(
    install_repos: InstallRepos, tmp_path: Path, uv_cache: Path
) -> None:
    lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml")
    house = tmp_path / "house"
    assert gpuenv("fetch", str(lockfile), "-d", str(house)).returncode == 0
    assert sorted(p.name for p in house.iterdir()) == [JAX, NUMPY]
    off = ("--offline", "--from", str(house), "--no-smoke-test")
    done = gpuenv("install", str(lockfile), "--name", "off", *off)
    assert done.returncode == 0, done.stderr
    assert jax_version("off") == "0.4.30"
    assert files_in(gpuenv_cache(), "*.whl") == []  # read where it is, not copied again

    # a regular file with the right name and other bytes: uv refuses it
    (house / JAX).write_bytes((install_repos.wheels / "jax-0.4.31-py3-none-any.whl").read_bytes())
    other = tmp_path / "b.lock.yml"
    other.write_text(lockfile.read_text() + "\n# another lockfile, the same files\n")
    bad = gpuenv("install", str(other), "--name", "off2", *off)
    assert bad.returncode == 1 and "does not match the lockfile" in bad.stderr, bad.stderr
    assert EnvLocation.named("off2").current() is None


# --- what gather hands to the installers ------------------------------------------------------


def _art(url: str, name: str = "jax", filename: str = JAX, kind: str = "pip") -> Artifact:
    return Artifact(kind, name, filename, url, "a" * 64, None)


@pytest.mark.parametrize(
    "url",
    [
        f"https://files.example/p --index-url http://evil.example/{JAX}",
        f"https://files.example/p\n--find-links /tmp/{JAX}",
        f'https://files.example/"{JAX}',
        f"https://files.example/\x00/{JAX}",
        f"ftp://files.example/{JAX}",
    ],
    ids=["space-option", "newline-option", "quote", "nul", "ftp"],
)
def test_a_url_that_could_smuggle_an_option_into_uv_is_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        gather([_art(url)], cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("name", ["jax --no-deps", "jax\n-e .", "-r/etc/passwd", ""])
def test_a_package_name_that_is_not_one_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        gather([_art(f"https://files.example/{JAX}", name=name)], cache=tmp_path / "cache")


def test_gather_downloads_no_wheel_and_drops_url_fragments(tmp_path: Path) -> None:
    url = f"https://files.example/p/{JAX}#sha256={'b' * 64}"
    other = f"https://files.example/p/{NUMPY}"
    sources = gather([_art(url), _art(other, "numpy", NUMPY)], cache=tmp_path / "cache")
    assert [s.url for s in sources] == [url.split("#")[0], other]  # the lockfile's hash rules
    assert not (tmp_path / "cache").exists()  # unreachable hosts: nothing was fetched


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("kind", ["fifo", "folder", "missing"])
def test_a_lockfile_wheel_url_naming_no_regular_file_is_refused_at_install(
    kind: str, install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml")
    odd = tmp_path / "odd" / JAX
    odd.parent.mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", f"{odd.parent} {install_repos.wheels}")
    if kind == "fifo":
        os.mkfifo(odd)
    elif kind == "folder":
        odd.mkdir()
    text = lockfile.read_text().replace(
        (install_repos.wheels / JAX).resolve().as_uri(), odd.as_uri()
    )
    lockfile.write_text(text)
    done = gpuenv("install", str(lockfile), "--name", "lab", timeout=60)  # a pipe must not block
    assert done.returncode == (1 if kind == "missing" else 2), done.stderr
    assert ("cannot read" if kind == "missing" else "not a regular file") in done.stderr
    assert EnvLocation.named("lab").current() is None


# --- fail fast: the lockfile's Python ---------------------------------------------------------


def test_install_stops_before_any_download_when_the_python_cannot_be_had(
    install_repos: InstallRepos, tmp_path: Path, uv_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with counting_server(install_repos.wheels) as (base, hits):
        monkeypatch.setenv("PIP_FIND_LINKS", base)
        lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml", base, python="3.99")
        done = gpuenv("install", str(lockfile), "--name", "lab")
    assert done.returncode == 1, done.stderr
    assert "needs Python 3.99" in done.stderr and "Nothing was downloaded" in done.stderr
    assert "uv python install 3.99" in done.stderr and "Traceback" not in done.stderr
    assert hits == Counter()  # not one request
    assert EnvLocation.named("lab").current() is None


def _fake_uv(tmp_path: Path, *, find: str, downloads: list[dict[str, Any]]) -> str:
    """A uv that answers `python find` with `find` (empty: not found) and `python list
    --only-downloads` with `downloads`; it records every call."""
    script = tmp_path / "uv"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path / "calls"}"\n'
        'if [ "$2" = find ]; then\n'
        f"  {'echo ' + find + '; exit 0' if find else 'exit 2'}\n"
        "fi\n"
        f"echo '{json.dumps(downloads)}'\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


posix_only = pytest.mark.skipif(sys.platform == "win32", reason="a /bin/sh stand-in for uv")
CPYTHON = {"key": "cpython-3.9.25-linux-x86_64-gnu", "version": "3.9.25"}
PYPY = {"key": "pypy-3.9.19-linux-x86_64-gnu", "version": "3.9.19"}


@pytest.fixture
def py39(install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    # what uv answers is the stand-in's to say: gpuenv's own discovery finds no 3.9 here
    monkeypatch.setattr(python_check, "_discovered", lambda version: None)
    return load_locked(wheel_lock(install_repos, tmp_path / "a.lock.yml", python="3.9"))


@posix_only
def test_a_python_uv_finds_is_enough_even_offline(py39: Any, tmp_path: Path) -> None:
    uv = _fake_uv(tmp_path, find="/usr/bin/python3.9", downloads=[])
    check_python_available(py39, uv=uv, offline=True)
    assert "python find --system --no-project 3.9" in (tmp_path / "calls").read_text()


@posix_only
def test_the_python_uv_finds_is_the_one_the_venv_is_built_on(py39: Any, tmp_path: Path) -> None:
    """`uv venv` is handed the interpreter the check found, so it does not look again."""
    uv = _fake_uv(tmp_path, find=sys.executable, downloads=[])
    assert check_python_available(py39, uv=uv, offline=True) == Path(sys.executable)


@posix_only
@pytest.mark.parametrize("answer", ["python3.9", "/nowhere/bin/python3.9", "/"])
def test_a_found_python_that_is_no_file_is_not_passed_on(
    answer: str, py39: Any, tmp_path: Path
) -> None:
    """A relative path, a missing file or a folder from `uv python find` still means "found"
    (as before), but `uv venv` is left to look for the version itself."""
    uv = _fake_uv(tmp_path, find=answer, downloads=[])
    assert check_python_available(py39, uv=uv, offline=True) is None


@posix_only
def test_a_python_uv_can_download_is_enough(
    py39: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV_PYTHON_DOWNLOADS")
    uv = _fake_uv(tmp_path, find="", downloads=[CPYTHON])
    assert check_python_available(py39, uv=uv) is None  # `uv venv` downloads it


@posix_only
@pytest.mark.parametrize(
    ("setting", "offline", "downloads", "said"),
    [
        ("never", False, [CPYTHON], "UV_PYTHON_DOWNLOADS=never"),
        ("manual", False, [CPYTHON], "UV_PYTHON_DOWNLOADS=manual"),
        ("", True, [CPYTHON], "--offline"),
        ("", False, [], "no download of it"),
        ("", False, [PYPY], "no download of it"),  # `uv venv` would not pick PyPy
    ],
)
def test_a_python_that_cannot_be_had_is_refused_with_the_fix(
    setting: str,
    offline: bool,
    downloads: list[dict[str, Any]],
    said: str,
    py39: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", setting)
    uv = _fake_uv(tmp_path, find="", downloads=downloads)
    with pytest.raises(PythonUnavailable) as err:
        check_python_available(py39, uv=uv, offline=offline)
    assert said in str(err.value) and "gpuenv lock --python X.Y" in str(err.value)


@posix_only
def test_uv_answering_nonsense_is_refused_not_trusted(
    py39: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV_PYTHON_DOWNLOADS")
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\n[ \"$2\" = find ] && exit 2\necho 'not json {'\n")
    uv.chmod(0o755)
    with pytest.raises(PythonUnavailable, match="could not say"):
        check_python_available(py39, uv=str(uv))


@posix_only
def test_uv_failing_to_list_its_downloads_is_refused_whatever_it_printed(
    py39: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `uv python list` exiting 2 has not answered, even with a CPython on its output
    monkeypatch.delenv("UV_PYTHON_DOWNLOADS")
    uv = tmp_path / "uv"
    uv.write_text(
        f"#!/bin/sh\n[ \"$2\" = find ] && exit 2\necho '{json.dumps([CPYTHON])}'\nexit 2\n"
    )
    uv.chmod(0o755)
    with pytest.raises(PythonUnavailable, match="could not say"):
        check_python_available(py39, uv=str(uv))


def test_a_conda_lockfile_brings_its_python_or_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    with_python = load_locked(
        _conda_lock(install_repos, tmp_path / "c.lock.yml", install_repos.channel)
    )
    check_python_available(with_python, uv=str(tmp_path / "no-uv-needed"))
    without = load_locked(write_valid(tmp_path / "v.lock.yml", conda=True))
    with pytest.raises(PythonUnavailable, match="no python among them"):
        check_python_available(without, uv=str(tmp_path / "no-uv-needed"))


@posix_only
def test_install_builds_the_venv_on_the_python_the_check_found(
    install_repos: InstallRepos,
    tmp_path: Path,
    uv_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """uv looks for the lockfile's Python once (the fail-fast check), not twice: `uv venv` is
    given the interpreter it found (looking again cost `uv venv` most of its time)."""
    calls = record_uv_calls(monkeypatch, tmp_path)
    lockfile = wheel_lock(install_repos, tmp_path / "a.lock.yml")
    with pytest.raises(SystemExit) as exited:
        main(["install", str(lockfile), "--name", "lab", "--no-smoke-test", "-q"])
    assert exited.value.code == 0, capsys.readouterr().err
    lines = calls.read_text().splitlines()
    finds = [line for line in lines if line.startswith("python find")]
    venvs = [line.split() for line in lines if line.startswith("venv ")]
    assert len(finds) == 1 and len(venvs) == 1
    found = Path(venvs[0][venvs[0].index("--python") + 1])
    assert found.is_absolute() and found.is_file()  # a path, not the version to look for
    assert jax_version("lab") == "0.4.30"


def test_setup_checks_the_python_before_it_gathers_anything(
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    machine = describe_machine(
        load_knowledge_base(), gpu=None, driver=None, os_name="linux", arch=None
    )
    real_lock = lock_module.lock_plan

    def plan_setup(*_a: Any, **_kw: Any) -> SetupPlan:
        return SetupPlan(jax_plan(), store_root() / ".setup" / "default.lock.yml", None, (), False)

    def lock_plan(plan: Any, options: lock_module.LockOptions) -> Any:
        local = dict(indexes=install_repos.indexes, channels=(install_repos.channel,))
        return real_lock(plan, dataclasses.replace(options, exclude_newer="none", **local))

    gathered: list[object] = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(detect_module, "detect_machine", lambda: machine)
    monkeypatch.setattr(setup_planning, "plan_setup", plan_setup)
    monkeypatch.setattr(lock_module, "lock_plan", lock_plan)
    monkeypatch.setattr(indexes_module, "user_index_config", lambda: install_repos.indexes)
    monkeypatch.setattr(artifacts_module, "gather", lambda *a, **kw: gathered.append(a))
    # not here: uv's search (started early, or asked again) finds nothing
    monkeypatch.setattr(python_check.PythonLookup, "answer", lambda self: None)
    monkeypatch.setattr(python_check, "_discovered", lambda version: None)  # nor elsewhere
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")  # and not downloadable
    with pytest.raises(SystemExit) as exited:
        main(["setup", "-q"])
    assert exited.value.code == 1
    assert f"needs Python {PY}" in capsys.readouterr().err
    assert gathered == []  # stopped before any download
    assert EnvLocation.named("default").current() is None


# --- `gpuenv cache`: uv's cache is reported, never emptied -----------------------------------


def test_cache_size_reports_uv_cache_and_clean_leaves_it_alone(
    install_repos: InstallRepos, tmp_path: Path, uv_cache: Path
) -> None:
    lockfile = _conda_lock(install_repos, tmp_path / "c.lock.yml", install_repos.channel)
    done = gpuenv("install", str(lockfile), "--prefix", str(tmp_path / "env"), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    sized = gpuenv("cache", "size", "--json")
    assert sized.returncode == 0, sized.stderr
    report = json.loads(sized.stdout)
    assert Path(report["uv"]["path"]) == uv_cache
    assert report["uv"]["bytes"] > 0 and report["bytes"]["artifacts"] > 0
    text = gpuenv("cache", "size").stdout
    assert "uv (wheels)" in text and str(uv_cache) in text and "not gpuenv's" in text
    before = sorted(str(p) for p in uv_cache.rglob("*"))
    cleaned = gpuenv("cache", "clean")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "uv cache clean" in cleaned.stdout and str(uv_cache) in cleaned.stdout
    assert not (gpuenv_cache() / "artifacts").exists()  # gpuenv's own copies are gone
    assert sorted(str(p) for p in uv_cache.rglob("*")) == before  # uv's, untouched


def test_cache_size_without_uv_still_reports_gpuenv_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gpuenv.uv.binary as uv_binary
    from lockdata import in_process

    def no_uv() -> str:
        raise uv_binary.UvMissingError("uv is not installed")

    monkeypatch.setattr(uv_binary, "find_uv", no_uv)
    (gpuenv_cache() / "recipes").mkdir(parents=True)
    (gpuenv_cache() / "recipes" / "kb.pickle").write_bytes(b"x" * 1000)
    code, out, err = in_process("cache", "size", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["bytes"] == {"recipes": 1000} and report["uv"] == {"path": None, "bytes": None}
    code, out, err = in_process("cache", "size")
    assert code == 0 and "uv did not say where" in out, err
