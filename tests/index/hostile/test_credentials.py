"""Credentials in index URLs are never printed or stored.

Hostile round three: `user:password@` in an index URL appeared in unreachable-index errors,
`--json` errors, setup's output, `recipes check --online`, `-v` command lines and the
portable-install error, and was stored in the probe cache. Round four (issue 28): a token in the
query (`?token=`, `?sig=`, any value) too, `recipes verify --index`, and the lockfile-origin
refusal. Every test configures an index whose URL carries a secret (in its user info, or in its
query) and looks for the secret in everything gpuenv printed or wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuenv import cache
from gpuenv.output.redact import redact_text, redact_url
from installrepos import InstallRepos, gpuenv
from lockdata import in_process, write_for_wheels
from loopback import loopback

SECRET = "s3cr3t-t0ken"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _secret_url(where: str) -> str:
    port = _closed_port()
    if where == "userinfo":
        return f"http://alice:{SECRET}@127.0.0.1:{port}/simple/"
    return f"http://127.0.0.1:{port}/simple/?access_token={SECRET}"


@pytest.fixture(params=["userinfo", "query"])
def secret_index(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    url = _secret_url(request.param)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    return url


def _no_secret_anywhere(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text
    for path in cache.cache_dir().rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://alice:pw@host/simple", "https://***@host/simple"),
        ("https://TOKEN@host:8443/simple/", "https://***@host:8443/simple/"),
        ("see http://a:b@x/ and https://c:d@y/z", "see http://***@x/ and https://***@y/z"),
        ("https://u:p@ss@host/s", "https://***@host/s"),  # an @ inside the password
        ("(http://u:p@h/simple/)", "(http://***@h/simple/)"),
        ("https://host/simple/pkg@1.0", "https://host/simple/pkg@1.0"),  # a path's @ stays
        ("mail alice@example.org", "mail alice@example.org"),
        ("https://host/simple", "https://host/simple"),
        # every query value, whatever its name; names, hosts and paths stay
        ("https://h/s/?token=abc", "https://h/s/?token=***"),
        (
            "https://h/x.whl?access_token=a&sig=b;key=c",
            "https://h/x.whl?access_token=***&sig=***;key=***",
        ),
        ("https://h/x.whl?X-Amz-Signature=abc&v=2", "https://h/x.whl?X-Amz-Signature=***&v=***"),
        ("https://h/simple?abc123", "https://h/simple?***"),  # a bare token
        ("(https://h/p?t=abc).", "(https://h/p?t=***)."),  # prose around it stays
        ("'https://u:p@h/p?t=a&b=c'", "'https://***@h/p?t=***&b=***'"),  # as shlex quotes it
        ("https://h/x.whl?t=abc#sha256=00", "https://h/x.whl?t=***#sha256=00"),
        ("with url: /simple/?token=abc/jax/ (Caused", "with url: /simple/?token=*** (Caused"),
        ("what? a/b?c", "what? a/b?c"),  # a question in words, no URL
        # a URL with credentials inside another one's path (a redirect, a proxy's address)
        (
            "https://u:p@proxy/fetch/https://v:q@origin/simple/",
            "https://***@proxy/fetch/https://***@origin/simple/",
        ),
        ("https://h/fetch/https://v:q@origin/x", "https://h/fetch/https://***@origin/x"),
        ("https://h/p?q=a=b", "https://h/p?q=***"),  # a value holding '=' is masked whole
    ],
)
def test_redaction(text: str, shown: str) -> None:
    assert redact_text(text) == shown
    assert redact_url(text) == shown


def test_an_unreachable_index_error_never_shows_its_password(
    secret_index: str, tmp_path: Path
) -> None:
    args = ["lock", "jax", "--no-gpu", "--os", "linux", "--arch", "x86_64", "--python", "3.11"]
    out = gpuenv("-v", *args, "-o", str(tmp_path / "a.lock.yml"))
    assert out.returncode == 5, out.stderr
    assert "127.0.0.1" in out.stderr  # the index is still named, only its credentials go
    as_json = gpuenv(*args, "-o", str(tmp_path / "b.lock.yml"), "--json")
    assert as_json.returncode == 5
    assert json.loads(as_json.stdout)["ok"] is False
    _no_secret_anywhere(out.stdout, out.stderr, as_json.stdout, as_json.stderr)


def test_setup_never_shows_the_password(secret_index: str) -> None:
    out = gpuenv("-v", "setup", "jax", "--no-gpu")
    assert out.returncode == 5 and "127.0.0.1" in out.stderr and "Traceback" not in out.stderr
    as_json = gpuenv("setup", "jax", "--no-gpu", "--json")
    assert json.loads(as_json.stdout)["exit"] == 5
    _no_secret_anywhere(out.stdout, out.stderr, as_json.stdout, as_json.stderr)


def test_recipes_check_online_never_shows_the_password(secret_index: str) -> None:
    out = gpuenv("recipes", "check", "--online")
    assert "127.0.0.1" in out.stderr + out.stdout
    as_json = gpuenv("recipes", "check", "--online", "--json")
    _no_secret_anywhere(out.stdout, out.stderr, as_json.stdout, as_json.stderr)


def test_the_probe_cache_stores_no_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuenv.lock import probe_cache

    url = f"https://alice:{SECRET}@index.invalid/simple/"
    probe_cache._write(url, "jax", 100.0, files=["jax-0.4.30-py3-none-any.whl"])
    probe_cache._write(url, "torch", 100.0, gone=f"no host in {url}")
    assert probe_cache._read(url, "jax", 60.0, 120.0) == ["jax-0.4.30-py3-none-any.whl"]
    assert probe_cache._read(url.replace("alice", "bob"), "jax", 60.0, 120.0) is None
    _no_secret_anywhere()


def test_the_portable_install_error_never_shows_the_password(
    install_repos: InstallRepos, tmp_path: Path, secret_index: str
) -> None:
    wheel = install_repos.wheels / "jax-0.4.30-py3-none-any.whl"
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", [wheel], portable=True)
    code, out, err = in_process("fetch", str(lockfile), "-d", str(tmp_path / "house"))
    assert code != 0 and "none of the configured indexes" in err
    _no_secret_anywhere(out, err)


def test_any_error_message_is_redacted_where_it_is_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the last line of defence, for a message no source redacted: cli.main's own printing
    from gpuenv.cli import main

    def fails() -> Path:
        raise cache.CacheError(f"cannot use https://alice:{SECRET}@index.example/simple/")

    monkeypatch.setattr(cache, "cache_dir", fails)
    for args in (["cache", "dir"], ["cache", "dir", "--json"]):
        with pytest.raises(SystemExit) as exited:
            main(args)
        assert exited.value.code == 2
        out, err = capsys.readouterr()
        assert "https://***@index.example/simple/" in err
        assert SECRET not in out + err


def test_recipes_verify_never_shows_the_index_s_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")  # a closed port: retries only cost time
    for where in ("userinfo", "query"):
        url = _secret_url(where)
        args = ["recipes", "verify", "--artifacts", "--framework", "tensorflow"]
        args += ["--release", "2.20.0", "--index", url]
        out = gpuenv(*args)
        assert "127.0.0.1" in out.stdout + out.stderr  # the index is named: not its secrets
        as_json = gpuenv(*args, "--json")
        _no_secret_anywhere(out.stdout, out.stderr, as_json.stdout, as_json.stderr)


@pytest.mark.parametrize(
    "index", [f"ftp://alice:{SECRET}@127.0.0.1/simple", f"ftp://127.0.0.1/simple?token={SECRET}"]
)
def test_a_lab_lock_failure_never_shows_the_password(
    index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`lock --lab` prints each class's failure itself (FAILED <class>: ...), not through the
    CLI's last line of defence: here the refusal of an index gpuenv cannot read, which quotes
    the index."""
    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[lab]\nlockfiles = "locks"\n\n[stack]\nrequirements = ["jax"]\n\n'
        '[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'
    )
    out = gpuenv("lock", "--lab", str(lab), "--no-probe")
    assert "FAILED cpu" in out.stderr and "ftp:" in out.stderr, out.stderr
    _no_secret_anywhere(out.stdout, out.stderr)


# -- an install from an index that needs a password ------------------------------------------


@contextlib.contextmanager
def _basic_auth_server(root: Path, user: str, password: str) -> Iterator[tuple[str, list[str]]]:
    """Serve `root` only to requests with these credentials (HTTP basic auth, or a signed URL's
    `?token=<password>`); the paths asked."""
    import base64
    import http.server

    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, body_too: bool) -> None:
            asked.append(self.path)
            signed = f"token={password}" in self.path.partition("?")[2].split("&")
            if self.headers.get("Authorization") != expected and not signed:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="private"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = root / self.path.split("?")[0].lstrip("/")
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                self.send_error(404)
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body_too:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(body_too=True)

        def do_HEAD(self) -> None:
            self._answer(body_too=False)

    with loopback(Handler) as url:
        yield url.removeprefix("http://").rstrip("/"), asked


def _holding(folder: Path, secret: str) -> list[Path]:
    """Every file under `folder` whose bytes hold `secret` (links not followed)."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                if secret.encode() in path.read_bytes():
                    found.append(path)
    return found


KILLING_UV = """#!/bin/sh
case "$*" in
  *"pip install"*) kill -9 "$PPID"; sleep 5; exit 1 ;;
esac
exec "{real}" "$@"
"""

DRIVER = """
import sys
import gpuenv.uv.binary as binary
binary.find_uv = lambda: sys.argv[1]
from gpuenv.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("portable", [True, False])
@pytest.mark.parametrize("ending", ["finished", "killed"])
def test_an_install_from_a_private_index_writes_its_password_nowhere(
    ending: str,
    portable: bool,
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index needs a password for its pages and its files. The install gets them (from the
    index URL the user configured), and no file under GPUENV_HOME (the store, the work
    folders), gpuenv's cache, uv's cache or TMPDIR holds the password afterwards, whether the
    install finished or was killed while uv ran."""
    import subprocess
    import sys
    from urllib.parse import urlsplit

    import gpuenv.uv.binary as uv_binary
    from gpuenv.envs.store import EnvLocation

    index_root = Path(urlsplit(install_repos.index).path).parent
    wheels = [
        install_repos.wheels / "jax-0.4.30-py3-none-any.whl",
        install_repos.wheels / "numpy-1.26.4-py3-none-any.whl",
    ]
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    with _basic_auth_server(index_root, "alice", SECRET) as (host, asked):
        monkeypatch.setenv("PIP_INDEX_URL", f"http://alice:{SECRET}@{host}/simple/")
        monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        lockfile = write_for_wheels(
            tmp_path / "a.conda-lock.yml",
            wheels,
            portable=portable,
            base_url="" if portable else f"http://{host}/files/",
        )
        args = ["install", str(lockfile), "--name", "private", "--no-smoke-test"]
        if ending == "finished":
            done = gpuenv(*args)
            assert done.returncode == 0, done.stderr
            assert EnvLocation.named("private").current() is not None
        else:
            uv = tmp_path / "uv"
            uv.write_text(KILLING_UV.format(real=uv_binary.find_uv()))
            uv.chmod(0o755)
            driver = tmp_path / "driver.py"
            driver.write_text(DRIVER)
            done = subprocess.run(
                [sys.executable, str(driver), str(uv), *args],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == -9, done.stderr  # killed while uv installed
            assert list((tmp_path / "home" / "work").iterdir()), "no work folder left to search"
        assert any(p.startswith("/files/") for p in asked)  # the wheels came from there
        assert SECRET not in done.stdout + done.stderr
    for folder in (
        tmp_path / "home",
        tmp_path / "cache",
        tmpdir,
        Path(os.environ["UV_CACHE_DIR"]),
    ):
        assert not _holding(folder, SECRET), folder


@pytest.mark.parametrize("ending", ["finished", "killed"])
def test_a_signed_url_s_token_is_written_nowhere(
    ending: str, install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wheels named by signed URLs (`?token=...`) from the user's own find-links server: the
    token is a secret too, so uv's requirement list never holds it."""
    import subprocess
    import sys
    from urllib.parse import urlsplit

    import gpuenv.uv.binary as uv_binary

    index_root = Path(urlsplit(install_repos.index).path).parent
    wheels = [
        install_repos.wheels / "jax-0.4.30-py3-none-any.whl",
        install_repos.wheels / "numpy-1.26.4-py3-none-any.whl",
    ]
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    with _basic_auth_server(index_root, "alice", SECRET) as (host, asked):
        monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
        monkeypatch.delenv("PIP_INDEX_URL", raising=False)
        monkeypatch.setenv("PIP_FIND_LINKS", f"http://{host}/files/")
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        lockfile = write_for_wheels(
            tmp_path / "a.conda-lock.yml", wheels, base_url=f"http://{host}/files/"
        )
        text = lockfile.read_text()
        for wheel in wheels:
            text = text.replace(f"{wheel.name}\n", f"{wheel.name}?token={SECRET}\n")
        lockfile.write_text(text)
        assert text.count(f"?token={SECRET}") == 2
        args = ["install", str(lockfile), "--name", "signed", "--no-smoke-test"]
        if ending == "finished":
            done = gpuenv("-v", *args)
            assert done.returncode == 0, done.stderr
        else:
            uv = tmp_path / "uv"
            uv.write_text(KILLING_UV.format(real=uv_binary.find_uv()))
            uv.chmod(0o755)
            driver = tmp_path / "driver.py"
            driver.write_text(DRIVER)
            done = subprocess.run(
                [sys.executable, str(driver), str(uv), "-v", *args],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == -9, done.stderr
        assert any(p.startswith("/files/") and "token=" in p for p in asked)
        assert SECRET not in done.stdout + done.stderr
    for folder in (
        tmp_path / "home",
        tmp_path / "cache",
        tmpdir,
        Path(os.environ["UV_CACHE_DIR"]),
    ):
        assert not _holding(folder, SECRET), folder


def test_uv_s_error_text_shows_no_query_value(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv fails on a URL gpuenv passed it; its words reach the user without the URL's query."""
    port = _closed_port()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{port}/simple/?key={SECRET}")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    args = ["lock", "jax", "--no-gpu", "--os", "linux", "--arch", "x86_64", "--python", "3.11"]
    out = gpuenv("-v", *args, "--no-probe", "-o", str(tmp_path / "a.conda-lock.yml"))
    assert out.returncode != 0 and f"127.0.0.1:{port}" in out.stderr, out.stderr
    assert "running: " in out.stderr  # -v shows uv's command line, with the URL in it
    _no_secret_anywhere(out.stdout, out.stderr)
