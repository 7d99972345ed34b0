"""The lockfile-origin rule (issue 28): a lockfile's packages come only from the installing
user's configured indexes and find-links locations, the framework indexes the knowledge base
names, the channels the user trusts, or a wheelhouse the user passes; any other origin is
refused before anything is downloaded or changed (exit 2), unless --allow-any-origin.

Two servers on 127.0.0.1: the user's index (its pages and its files), and another one serving
the very same wheels (right hashes: only the origin is wrong). Every refusal is also checked
to have asked the other server nothing."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from gpuenv.envs.store import EnvLocation
from gpuenv.index import retry
from gpuenv.lock.errors import LockError
from gpuenv.lock.pypi import PipArtifact
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock
from lockdata import dump, in_process, load, package, write_for_wheels, write_valid
from loopback import loopback

REPO = Path(__file__).resolve().parents[3]
SECRET = "0r1g1n-s3cr3t"


@contextlib.contextmanager
def counting_server(root: Path) -> Iterator[tuple[str, Counter[str]]]:
    """Serve `root` (a folder's index.html for the folder); count every request by path."""
    hits: Counter[str] = Counter()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _file(self) -> Path | None:
            hits[urlsplit(self.path).path] += 1
            path = root / urlsplit(self.path).path.lstrip("/")
            if path.is_dir():
                path = path / "index.html"
            return path if path.is_file() else None

        def do_HEAD(self) -> None:
            path = self._file()
            if path is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(path.stat().st_size))
            self.end_headers()

        def do_GET(self) -> None:
            path = self._file()
            if path is None:
                self.send_error(404)
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with loopback(Handler) as url:
        yield url, hits


WHEELS = ("jax-0.4.30-py3-none-any.whl", "numpy-1.26.4-py3-none-any.whl")


@pytest.fixture
def servers(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Counter[str]]]:
    """(the user's index server, another server, the other server's hits); PIP_INDEX_URL names
    the first one's simple/ pages, which list its files/."""
    index_root = Path(urlsplit(install_repos.index).path).parent
    other = tmp_path / "other"
    other.mkdir()
    for name in WHEELS:
        shutil.copyfile(install_repos.wheels / name, other / name)
    with counting_server(index_root) as (mine, _), counting_server(other) as (theirs, hits):
        monkeypatch.setenv("PIP_INDEX_URL", mine + "simple/")
        monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
        yield mine, theirs, hits


def _lock_at(tmp_path: Path, install_repos: InstallRepos, base: str, name: str = "a") -> Path:
    wheels = [install_repos.wheels / w for w in WHEELS]
    return write_for_wheels(tmp_path / f"{name}.conda-lock.yml", wheels, base_url=base)


def _set_url(lockfile: Path, project: str, url: str) -> Path:
    data = load(lockfile)
    package(data, project)["url"] = url
    return dump(data, lockfile)


# -- install -----------------------------------------------------------------------------------


def test_a_lockfile_of_the_configured_index_installs(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    """The index's files are not under its pages' folder (like the default index's, on another
    host): its project pages list them, by URL and sha256, and that is what counts."""
    mine, _, _ = servers
    lockfile = _lock_at(tmp_path, install_repos, mine + "files/")
    done = gpuenv("install", str(lockfile), "--name", "mine", "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    assert EnvLocation.named("mine").current() is not None


def test_a_lockfile_from_another_server_is_refused_before_any_download(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    _, theirs, hits = servers
    lockfile = _lock_at(tmp_path, install_repos, theirs)
    done = gpuenv("install", str(lockfile), "--name", "theirs", "--no-smoke-test")
    assert done.returncode == 2, done.stderr
    assert "origins you did not configure" in done.stderr
    assert f"pip package jax 0.4.30 from {theirs}{WHEELS[0]}" in done.stderr
    assert "--allow-any-origin" in done.stderr and "Traceback" not in done.stderr
    assert not hits  # nothing was asked of that server
    assert EnvLocation.named("theirs").current() is None
    assert not (Path(EnvLocation.named("theirs").link).parent / ".versions").exists() or not list(
        (Path(EnvLocation.named("theirs").link).parent / ".versions").iterdir()
    )


def test_allow_any_origin_installs_it(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    _, theirs, hits = servers
    lockfile = _lock_at(tmp_path, install_repos, theirs)
    done = gpuenv(
        "install", str(lockfile), "--name", "any", "--no-smoke-test", "--allow-any-origin"
    )
    assert done.returncode == 0, done.stderr
    assert hits[f"/{WHEELS[0]}"] >= 1


def test_one_foreign_entry_is_enough_to_refuse(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    mine, theirs, hits = servers
    lockfile = _set_url(
        _lock_at(tmp_path, install_repos, mine + "files/"), "numpy", theirs + WHEELS[1]
    )
    code, _, err = in_process("install", str(lockfile), "--name", "one", "--dry-run")
    assert code == 2, err
    assert "numpy 1.26.4" in err and "jax 0.4.30 from" not in err
    assert not hits


@pytest.mark.parametrize(
    "trick",
    [
        "{mine}files/../other/{wheel}",  # out of the folder by a dot segment
        "{mine}files/%2e%2e/other/{wheel}",  # the same, percent-encoded
        "{mine}files%2F..%2Fother/{wheel}",  # an encoded slash
        "http://{mine_host}@{theirs_host}/{wheel}",  # the index's host as user info
        "http://{mine_host}:pw@{theirs_host}/{wheel}",
        "{theirs}files/{wheel}",  # the same path on another port
        "{mine_scheme_https}files/{wheel}",  # another scheme
        "{mine}filesevil/{wheel}",  # a sibling whose name starts the same
    ],
)
def test_ways_round_the_find_links_folder_are_refused(
    trick: str,
    servers: tuple[str, str, Counter[str]],
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mine, theirs, hits = servers
    monkeypatch.setenv("PIP_FIND_LINKS", mine + "files/")
    url = trick.format(
        mine=mine,
        theirs=theirs,
        mine_host=urlsplit(mine).netloc,
        theirs_host=urlsplit(theirs).netloc,
        mine_scheme_https=mine.replace("http://", "https://"),
        wheel=WHEELS[0],
    )
    lockfile = _set_url(_lock_at(tmp_path, install_repos, mine + "files/"), "jax", url)
    code, _, err = in_process("install", str(lockfile), "--name", "trick", "--dry-run")
    assert code == 2, err
    assert "jax 0.4.30" in err and "origins you did not configure" in err
    assert not hits


def test_files_in_a_configured_find_links_folder_install(
    servers: tuple[str, str, Counter[str]],
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, theirs, _ = servers
    monkeypatch.setenv("PIP_FIND_LINKS", theirs)
    lockfile = _lock_at(tmp_path, install_repos, theirs)
    code, out, err = in_process("install", str(lockfile), "--name", "links", "--dry-run")
    assert code == 0, err
    assert "would install" in out


def test_a_listed_file_with_another_sha256_is_refused(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    """The index lists that URL, but with another sha256 than the lockfile's: the right origin
    and the wrong bytes, refused as a hash mismatch (exit 1) before anything is downloaded."""
    mine, _, _ = servers
    lockfile = _lock_at(tmp_path, install_repos, mine + "files/")
    data = load(lockfile)
    package(data, "jax")["hash"]["sha256"] = "a" * 64
    code, _, err = in_process("install", str(dump(data, lockfile)), "--name", "sha", "--dry-run")
    assert code == 1, err
    assert "jax 0.4.30" in err and "does not match the lockfile's " + "a" * 64 in err


def test_an_index_that_cannot_be_read_is_named_exit_5(
    servers: tuple[str, str, Counter[str]],
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    monkeypatch.setattr(retry, "BACKOFF_S", 0.01)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed}/simple/")
    mine, _, _ = servers
    lockfile = _lock_at(tmp_path, install_repos, mine + "files/")
    code, _, err = in_process("install", str(lockfile), "--name", "down", "--dry-run")
    assert code == 5, err
    assert f"127.0.0.1:{closed}" in err and "cannot tell" in err


def test_the_refusal_shows_no_credentials_or_query_values(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    _, theirs, hits = servers
    host = urlsplit(theirs).netloc
    url = f"http://alice:{SECRET}@{host}/{WHEELS[0]}?token={SECRET}x&sig={SECRET}y"
    lockfile = _set_url(_lock_at(tmp_path, install_repos, theirs), "jax", url)
    for args in ([], ["--json"]):
        code, out, err = in_process("install", str(lockfile), "--name", "s", "--dry-run", *args)
        assert code == 2, err
        assert SECRET not in out + err
        assert host in out + err
    assert not hits


def test_local_files_come_only_from_configured_folders(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    lockfile = write_for_wheels(tmp_path / "a.conda-lock.yml", [install_repos.wheels / WHEELS[0]])
    code, _, err = in_process("install", str(lockfile), "--name", "local", "--dry-run")
    assert code == 2, err
    assert "file://" in err and "jax 0.4.30" in err
    monkeypatch.setenv("PIP_FIND_LINKS", str(install_repos.wheels))
    code, _, err = in_process("install", str(lockfile), "--name", "local", "--dry-run")
    assert code == 0, err


def test_a_local_index_lists_files_outside_its_pages_folder(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What gpuenv itself writes for this machine from a file:// index installs where that index
    is configured (its files/ are beside its simple/, not under it), and nowhere else."""
    lockfile = make_lock(install_repos, tmp_path / "a.conda-lock.yml", jax_plan("0.4.30"))
    assert "file://" in lockfile.read_text()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", install_repos.index)
    code, _, err = in_process("install", str(lockfile), "--name", "idx", "--dry-run")
    assert code == 0, err
    other = tmp_path / "empty-index"
    other.mkdir()
    monkeypatch.setenv("PIP_INDEX_URL", other.as_uri())
    code, _, err = in_process("install", str(lockfile), "--name", "idx", "--dry-run")
    assert code == 2, err


def test_a_framework_index_of_the_knowledge_base_is_trusted(tmp_path: Path) -> None:
    from gpuenv.envs.origins import Origins, check_origins
    from gpuenv.lock.load import load_locked

    lockfile = write_valid(tmp_path / "a.conda-lock.yml")
    data = load(lockfile)
    package(data, "jax")["url"] = (
        "https://download.pytorch.org/whl/cu118/jax-0.4.30-py3-none-any.whl"
    )
    package(data, "numpy")["url"] = (
        "https://storage.googleapis.com/jax-releases/cuda12/numpy-1.26.4-py3-none-any.whl"
    )
    locked = load_locked(dump(data, lockfile))
    check_origins(locked, Origins())  # no page read: both are under a knowledge-base index
    package(data, "jax")["url"] = (
        "https://download.pytorch.org/whl/cu118/../../evil/jax-0.4.30-py3-none-any.whl"
    )
    with pytest.raises(LockError, match=r"jax 0\.4\.30"):
        check_origins(load_locked(dump(data, lockfile)), Origins(knowledge_base=True))


# -- conda channels ----------------------------------------------------------------------------


def test_conda_packages_come_from_trusted_channels_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lockfile's own metadata.channels names https://conda.example/main: that grants
    nothing; --channel (the user's word) does."""
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_FIND_LINKS", "https://files.example/p/")
    monkeypatch.setenv("PIP_INDEX_URL", "https://files.example/simple/")
    lockfile = write_valid(tmp_path / "a.conda-lock.yml", conda=True)
    assert "https://conda.example/main" in str(load(lockfile)["metadata"]["channels"])
    from gpuenv.envs.origins import check_origins, user_origins
    from gpuenv.index.config import user_index_config
    from gpuenv.lock.load import load_locked

    locked = load_locked(lockfile)
    with pytest.raises(LockError, match=r"conda package cudatoolkit 11\.2\.2") as refused:
        check_origins(locked, user_origins(user_index_config()))
    assert "--channel" in str(refused.value)
    check_origins(
        locked, user_origins(user_index_config(), channels=("https://conda.example/main",))
    )
    monkeypatch.setenv("GPUENV_CHANNELS", "https://other.example/x https://conda.example/main/")
    check_origins(locked, user_origins(user_index_config()))  # the user's configured channels
    monkeypatch.setenv("GPUENV_CHANNELS", "https://conda.example/mainly")
    with pytest.raises(LockError, match="cudatoolkit"):
        check_origins(locked, user_origins(user_index_config()))
    monkeypatch.delenv("GPUENV_CHANNELS")
    # a name is a channel of conda-forge's host, as rattler reads it
    data = load(lockfile)
    package(data, "cudatoolkit")["url"] = (
        "https://conda.anaconda.org/conda-forge/linux-64/cudatoolkit-11.2.2-h_0.tar.bz2"
    )
    check_origins(load_locked(dump(data, lockfile)), user_origins(user_index_config()))
    package(data, "cudatoolkit")["url"] = (
        "https://conda.anaconda.org/evil/linux-64/cudatoolkit-11.2.2-h_0.tar.bz2"
    )
    with pytest.raises(LockError, match="cudatoolkit"):
        check_origins(load_locked(dump(data, lockfile)), user_origins(user_index_config()))


# -- fetch and setup ---------------------------------------------------------------------------


def test_fetch_refuses_another_origin_and_allows_it_when_asked(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    _, theirs, hits = servers
    lockfile = _lock_at(tmp_path, install_repos, theirs)
    house = tmp_path / "house"
    code, _, err = in_process("fetch", str(lockfile), "-d", str(house))
    assert code == 2 and "origins you did not configure" in err, err
    assert not hits and not house.exists()
    code, _, err = in_process("fetch", str(lockfile), "-d", str(house), "--allow-any-origin")
    assert code == 0, err
    assert (house / WHEELS[0]).read_bytes() == (install_repos.wheels / WHEELS[0]).read_bytes()


def test_a_wheelhouse_the_user_passes_is_the_origin(
    servers: tuple[str, str, Counter[str]], install_repos: InstallRepos, tmp_path: Path
) -> None:
    _, theirs, hits = servers
    lockfile = _lock_at(tmp_path, install_repos, theirs)
    house = tmp_path / "house"
    house.mkdir()
    for name in WHEELS:
        shutil.copyfile(install_repos.wheels / name, house / name)
    done = gpuenv(
        "install",
        str(lockfile),
        "--name",
        "house",
        "--offline",
        "--from",
        str(house),
        "--no-smoke-test",
    )
    assert done.returncode == 0, done.stderr
    assert not hits


LAB = """
[lab]
lockfiles = "locks"

[stack]
requirements = ["jax"]

[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


def test_setup_refuses_a_lab_lockfile_of_another_origin(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    (tmp_path / "locks").mkdir()
    make_lock(install_repos, tmp_path / "locks" / "cpu.lock.yml", jax_plan("0.4.30"))
    other = tmp_path / "empty-index"
    other.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", other.as_uri())
    refused = gpuenv("setup", "--lab", str(lab), "--name", "lab")
    assert refused.returncode == 2, refused.stderr
    assert "origins you did not configure" in refused.stderr
    assert EnvLocation.named("lab").current() is None
    allowed = gpuenv("setup", "--lab", str(lab), "--name", "lab", "--allow-any-origin")
    assert "origins you did not configure" not in allowed.stderr
    # installed (the stand-in jax then fails verify's `import jax.numpy`: not this test's)
    assert "installing 2 wheels" in allowed.stderr, allowed.stderr


# -- what gpuenv itself writes -----------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((REPO / "lockfiles").glob("*.conda-lock.yml")))
def test_the_committed_lockfiles_need_no_configuration(path: Path) -> None:
    from gpuenv.envs.origins import Origins, check_origins
    from gpuenv.lock.load import load_locked

    check_origins(load_locked(path), Origins(knowledge_base=False))  # portable: every entry


def test_the_lock_refuses_local_files_nothing_offered(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.portability import refuse_foreign_files

    wheel = install_repos.wheels / WHEELS[0]
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    planted = PipArtifact("jax", "0.4.30", wheel.as_uri(), sha, None)
    with pytest.raises(LockError, match=r"jax 0\.4\.30 from .*jax-0\.4\.30"):
        refuse_foreign_files([planted], install_repos.indexes)  # files/ is not wheels/
    refuse_foreign_files([planted], IndexConfig(find_links=(str(install_repos.wheels),)))
    index_root = Path(urlsplit(install_repos.index).path).parent
    listed = PipArtifact("jax", "0.4.30", (index_root / "files" / WHEELS[0]).as_uri(), sha, None)
    refuse_foreign_files([listed], install_repos.indexes)  # the file:// index lists it
    routed = PipArtifact("jax", "0.4.30", wheel.as_uri(), sha, install_repos.wheels.as_uri())
    refuse_foreign_files([routed], IndexConfig())  # the framework index the plan routed it to


def test_lock_plan_checks_uv_s_answer(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.lock import pypi

    real = pypi._artifacts
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(install_repos.wheels / WHEELS[0], elsewhere / WHEELS[0])

    def steered(data: object, routed: dict[str, str]) -> list[PipArtifact]:
        arts = real(data, routed)  # type: ignore[arg-type]
        return [
            PipArtifact(a.name, a.version, (elsewhere / a.filename).as_uri(), a.sha256, a.index)
            if a.name == "jax"
            else a
            for a in arts
        ]

    monkeypatch.setattr(pypi, "_artifacts", steered)
    out = tmp_path / "a.conda-lock.yml"
    with pytest.raises(LockError, match="none of your find-links folders"):
        make_lock(install_repos, out, jax_plan("0.4.30"))
    assert not out.exists()
