"""Downloads survive a flaky server (retried with backoff) and a stalled one times out, against a
real HTTP server on 127.0.0.1 that misbehaves on purpose: gpuenv's own (`fetch`), and uv's at
install (uv downloads the wheels itself)."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from gpuenv.envs.artifacts import Artifact, fetch_all
from gpuenv.envs.errors import InstallError
from gpuenv.envs.store import EnvLocation, interpreter
from gpuenv.index import retry
from installrepos import InstallRepos, gpuenv, run_in
from lockdata import in_process, write_for_wheels
from loopback import loopback


@contextlib.contextmanager
def flaky_server(root: Path, mode: str, stall_s: float = 3.0) -> Iterator[tuple[str, Counter[str]]]:
    """Serve `root`; the first request of each file (every request with `mode="stall"`) fails
    as `mode` says: drop (close without an answer), cut (half the body), 503, stall-once."""
    hits: Counter[str] = Counter()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:  # uv asks first whether the server serves byte ranges
            path = root / self.path.lstrip("/")
            if not path.is_file():
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(path.stat().st_size))
            self.end_headers()

        def do_GET(self) -> None:
            hits[self.path] += 1
            first = hits[self.path] == 1
            path = root / self.path.lstrip("/")
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                self.send_error(404)
                return
            body = path.read_bytes()
            if first and mode == "drop":
                self.close_connection = True
                return
            if first and mode == "503":
                self.send_error(503)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if (first and mode == "stall-once") or mode == "stall":
                self.wfile.write(body[:10])
                self.wfile.flush()
                time.sleep(stall_s)
                self.close_connection = True
                return
            if first and mode == "cut":
                self.wfile.write(body[: len(body) // 2])
                self.close_connection = True
                return
            self.wfile.write(body)

    with loopback(Handler) as url:
        yield url, hits


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BACKOFF_S", 0.01)
    monkeypatch.setenv("GPUENV_DOWNLOAD_TIMEOUT", "0.5")


def _wheel_artifacts(wheels: Path, base: str) -> list[Artifact]:
    out = []
    for wheel in sorted(wheels.glob("*.whl"))[:2]:
        sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        out.append(
            Artifact("pip", wheel.name.split("-")[0], wheel.name, base + wheel.name, sha, None)
        )
    return out


@pytest.mark.parametrize("mode", ["drop", "cut", "503", "stall-once"])
def test_each_file_failing_once_still_arrives(
    mode: str, install_repos: InstallRepos, tmp_path: Path, quick_retries: None
) -> None:
    with flaky_server(install_repos.wheels, mode) as (base, hits):
        arts = _wheel_artifacts(install_repos.wheels, base)
        files = fetch_all(arts, tmp_path / "house")
    assert [f.path.read_bytes() for f in files] == [
        (install_repos.wheels / a.filename).read_bytes() for a in arts
    ]
    assert all(hits[f"/{a.filename}"] == 2 for a in arts), hits  # failed once, then retried


def test_a_stalled_download_times_out_with_a_clear_error(
    install_repos: InstallRepos, tmp_path: Path, quick_retries: None
) -> None:
    with flaky_server(install_repos.wheels, "stall", stall_s=5) as (base, hits):
        arts = _wheel_artifacts(install_repos.wheels, base)[:1]
        started = time.monotonic()
        with pytest.raises(InstallError) as err:
            fetch_all(arts, tmp_path / "house")
        took = time.monotonic() - started
    assert took < 4.5  # 4 tries of 0.5 s without data, not one 5 s stall each
    assert f"tried {retry.ATTEMPTS} times" in str(err.value) and base in str(err.value)
    assert hits[f"/{arts[0].filename}"] == retry.ATTEMPTS
    assert not list((tmp_path / "house").rglob("*.whl"))
    assert not list((tmp_path / "house").rglob(".partial-*"))


def test_a_missing_file_is_not_retried(
    install_repos: InstallRepos, tmp_path: Path, quick_retries: None
) -> None:
    with flaky_server(install_repos.wheels, "none") as (base, hits):
        art = Artifact(
            "pip", "jax", "jax-9-py3-none-any.whl", base + "jax-9-py3-none-any.whl", "a" * 64, None
        )
        with pytest.raises(InstallError, match="404"):
            fetch_all([art], tmp_path / "house")
    assert hits["/jax-9-py3-none-any.whl"] == 1


def test_install_from_a_server_that_drops_each_file_once(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = [
        install_repos.wheels / "jax-0.4.30-py3-none-any.whl",
        install_repos.wheels / "numpy-1.26.4-py3-none-any.whl",
    ]
    with flaky_server(install_repos.wheels, "drop") as (base, hits):
        monkeypatch.setenv("PIP_FIND_LINKS", base)  # the user's settings name that server
        lockfile = write_for_wheels(tmp_path / "a.lock.yml", wheels, base_url=base)
        done = gpuenv("install", str(lockfile), "--name", "lab", "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    # uv retried each dropped file; it reads a wheel twice from a server without byte ranges
    # (once for its metadata), so only "more than the dropped try" is uv's to promise
    assert set(hits) == {f"/{w.name}" for w in wheels}
    assert all(hits[f"/{w.name}"] >= 2 for w in wheels), hits
    current = EnvLocation.named("lab").current()
    assert current is not None
    assert run_in(interpreter(current), "import jax; print(jax.__version__)") == "0.4.30"


def test_fetch_portable_from_an_index_that_drops_each_request_once(
    install_repos: InstallRepos,
    tmp_path: Path,
    quick_retries: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index page is retried too (portable lockfiles look each file up there)."""
    monkeypatch.setattr(retry, "BACKOFF_S", 0.01)
    wheel = install_repos.wheels / "jax-0.4.30-py3-none-any.whl"
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", [wheel], portable=True)
    assert "index:///jax/" in lockfile.read_text()
    index_root = Path(urlsplit(install_repos.index).path).parent
    with flaky_server(index_root, "drop") as (base, hits):
        monkeypatch.setenv("PIP_INDEX_URL", base + "simple/")
        code, _, err = in_process("fetch", str(lockfile), "-d", str(tmp_path / "house"))
    assert code == 0, err
    assert (tmp_path / "house" / wheel.name).read_bytes() == wheel.read_bytes()
    assert hits["/simple/jax/"] == 2 and hits[f"/files/{wheel.name}"] == 2, hits


@pytest.mark.parametrize(("retries", "tries"), [("0", 1), ("1", 2)])
def test_a_download_is_tried_as_uv_http_retries_says(
    install_repos: InstallRepos,
    tmp_path: Path,
    quick_retries: None,
    monkeypatch: pytest.MonkeyPatch,
    retries: str,
    tries: int,
) -> None:
    monkeypatch.setenv(retry.RETRIES_ENV, retries)
    with flaky_server(install_repos.wheels, "stall", stall_s=5) as (base, hits):
        arts = _wheel_artifacts(install_repos.wheels, base)[:1]
        with pytest.raises(InstallError, match=f"tried {tries} times"):
            fetch_all(arts, tmp_path / "house")
    assert hits[f"/{arts[0].filename}"] == tries
