"""What install's artifact sources do that no other test pins (envs-sources' mutation
survivors, benchmarks/mutation/envs-sources.md): a download is streamed to disk, never held
whole in memory; a server that gives no length reports no total; a file:// URL may be a link
(a local channel's), which gpuenv follows, unlike a wheelhouse entry; a conda record without a
file name is named by its URL's last part; and a refusal that names many packages counts the
ones it leaves out."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import socket
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from gpuenv.envs.artifacts import Artifact, artifacts_of, fetch_all, gather
from gpuenv.index import retry
from loopback import loopback

BLOCK = b"\0" * (1 << 20)


@contextlib.contextmanager
def zeros_server(blocks: int, *, length: bool) -> Iterator[str]:
    """Serve `blocks` MiB of zero bytes at any path, with a Content-Length header or (HTTP/1.0,
    the body ends when the connection closes) without one; the body is never built whole."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if length else "HTTP/1.0"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            if length:
                self.send_header("Content-Length", str(blocks * len(BLOCK)))
            self.end_headers()
            for _ in range(blocks):
                self.wfile.write(BLOCK)
            self.close_connection = True

    with loopback(Handler) as url:
        yield url


def _zeros_sha(blocks: int) -> str:
    sha = hashlib.sha256()
    for _ in range(blocks):
        sha.update(BLOCK)
    return sha.hexdigest()


def test_a_download_is_streamed_not_held_whole_in_memory(tmp_path: Path) -> None:
    blocks = 48
    with zeros_server(blocks, length=True) as base:
        art = Artifact(
            "pip", "big", "big-1.0-py3-none-any.whl", base + "big", _zeros_sha(blocks), None
        )
        tracemalloc.start()
        try:
            (got,) = fetch_all([art], tmp_path / "house")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert got.path.stat().st_size == blocks * len(BLOCK)
    assert peak < 16 * len(BLOCK), f"{peak} bytes held for a {blocks} MiB download"


def test_a_body_of_unknown_length_reports_no_total(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int | None]] = []
    with zeros_server(3, length=False) as base:
        art = Artifact(
            "pip", "nolen", "nolen-1.0-py3-none-any.whl", base + "n", _zeros_sha(3), None
        )
        (got,) = fetch_all(
            [art], tmp_path / "house", progress=lambda f, done, total: seen.append((f, done, total))
        )
    assert got.path.stat().st_size == 3 * len(BLOCK)
    assert seen and seen[-1][1] == 3 * len(BLOCK)
    assert {total for _, _, total in seen} == {None}  # unknown, not a negative size
    # and with the header, every report carries it
    seen.clear()
    with zeros_server(2, length=True) as base:
        art = Artifact("pip", "len", "len-1.0-py3-none-any.whl", base + "l", _zeros_sha(2), None)
        fetch_all([art], tmp_path / "house2", progress=lambda f, d, t: seen.append((f, d, t)))
    assert {total for _, _, total in seen} == {2 * len(BLOCK)}


def test_a_file_url_that_is_a_link_is_followed(tmp_path: Path) -> None:
    """A local channel may hold links (a mirror that shares files): gpuenv reads the file
    they name (hashed as always); only a wheelhouse's entries must be files themselves."""
    body = b"a conda package's bytes\n"
    real = tmp_path / "store" / "cudatoolkit-11.2.2-h_0.tar.bz2"
    real.parent.mkdir()
    real.write_bytes(body)
    channel = tmp_path / "channel" / "linux-64"
    channel.mkdir(parents=True)
    link = channel / real.name
    link.symlink_to(real)
    sha, md5 = hashlib.sha256(body).hexdigest(), hashlib.md5(body).hexdigest()
    art = Artifact("conda", "cudatoolkit", real.name, link.as_uri(), sha, md5)
    (source,) = gather([art], cache=tmp_path / "cache")
    copy = Path(source.url.removeprefix("file://"))
    assert copy != link and not copy.is_symlink()
    assert copy.read_bytes() == body


def test_a_conda_record_without_a_file_name_is_named_by_its_url() -> None:
    record = {
        "name": "cudatoolkit",
        "url": "https://conda.example/main/linux-64/cudatoolkit-11.2.2-h%2B0.tar.bz2?x=1",
        "sha256": "a" * 64,
        "md5": "b" * 32,
    }
    locked = SimpleNamespace(conda=[record], pip=[])
    (art,) = artifacts_of(cast(Any, locked))
    assert art.filename == "cudatoolkit-11.2.2-h+0.tar.bz2"
    named = {**record, "file_name": "given.tar.bz2"}
    assert artifacts_of(cast(Any, SimpleNamespace(conda=[named], pip=[])))[0].filename == (
        "given.tar.bz2"
    )


def test_an_unreachable_index_names_eight_packages_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.envs.origins import MAX_SHOWN, check_origins, user_origins
    from gpuenv.index.config import user_index_config
    from gpuenv.lock.errors import SourceUnreachableError
    from gpuenv.lock.load import load_locked
    from lockdata import write_for_wheels

    monkeypatch.setattr(retry, "BACKOFF_S", 0.01)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed}/simple/")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    names = [f"pkg{chr(ord('a') + i)}" for i in range(MAX_SHOWN + 3)]
    wheels = []
    for name in names:
        wheel = tmp_path / "w" / f"{name}-1.0-py3-none-any.whl"
        wheel.parent.mkdir(exist_ok=True)
        wheel.write_bytes(name.encode())
        wheels.append(wheel)
    base = f"http://127.0.0.1:{closed}/files/"
    lockfile = write_for_wheels(tmp_path / "many.conda-lock.yml", wheels, base_url=base)
    with pytest.raises(SourceUnreachableError) as err:
        check_origins(load_locked(lockfile), user_origins(user_index_config()))
    text = str(err.value)
    assert "and 3 more" in text
    assert sum(f"{n} 1.0" in text for n in names) == MAX_SHOWN
    # exactly MAX_SHOWN: all named, nothing counted
    lockfile = write_for_wheels(
        tmp_path / "eight.conda-lock.yml", wheels[:MAX_SHOWN], base_url=base
    )
    with pytest.raises(SourceUnreachableError) as err:
        check_origins(load_locked(lockfile), user_origins(user_index_config()))
    assert "more" not in str(err.value)
    assert all(f"{n} 1.0" in str(err.value) for n in names[:MAX_SHOWN])


def test_a_refusal_of_many_untrusted_packages_names_eight_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.envs.origins import MAX_SHOWN, check_origins, user_origins
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.errors import UntrustedOriginError

    monkeypatch.delenv("GPUENV_CHANNELS", raising=False)

    def locked(n: int) -> Any:
        records = [
            {
                "name": f"lib{i:02}",
                "version": "1.0",
                "url": f"https://conda.evil.example/x/linux-64/lib{i:02}-1.0-0.tar.bz2",
                "sha256": "a" * 64,
            }
            for i in range(n)
        ]
        return SimpleNamespace(conda=records, pip=[], path=tmp_path / "x.conda-lock.yml")

    origins = user_origins(IndexConfig(index_url="https://pypi.example/simple/"))
    with pytest.raises(UntrustedOriginError) as err:
        check_origins(locked(MAX_SHOWN + 3), origins)
    text = str(err.value)
    assert "; and 3 more." in text
    assert sum(f"lib{i:02} 1.0" in text for i in range(MAX_SHOWN + 3)) == MAX_SHOWN
    with pytest.raises(UntrustedOriginError) as err:
        check_origins(locked(MAX_SHOWN), origins)
    assert "more." not in str(err.value)
    # conda packages only: the fix names the channel, not an index
    assert "--channel" in str(err.value) and "PIP_INDEX_URL" not in str(err.value)


def test_a_local_path_the_lockfile_names_is_checked_for_wheels_only(tmp_path: Path) -> None:
    """A wheel named by a path on the machine that locked it gets the advice to copy it there;
    a conda package at a missing path is just a file that cannot be read."""
    from gpuenv.envs.errors import InstallError

    gone = tmp_path / "elsewhere"

    def at_gone(kind: str, name: str, filename: str) -> Artifact:
        return Artifact(kind, name, filename, (gone / filename).as_uri(), "a" * 64, None)

    wheel = at_gone("pip", "jax", "jax-1.0-py3-none-any.whl")
    with pytest.raises(InstallError, match="copy the wheel there"):
        gather([wheel], cache=tmp_path / "cache")
    conda = at_gone("conda", "cudatoolkit", "cudatoolkit-1-0.tar.bz2")
    with pytest.raises(InstallError) as err:
        gather([conda], cache=tmp_path / "cache")
    assert "cannot read" in str(err.value) and "copy the wheel" not in str(err.value)


def test_a_local_wheel_that_is_a_dangling_link_cannot_be_read(tmp_path: Path) -> None:
    """The path is there (a link) but names nothing: an install error naming it, not a
    traceback."""
    from gpuenv.envs.errors import InstallError

    link = tmp_path / "jax-1.0-py3-none-any.whl"
    link.symlink_to(tmp_path / "gone.whl")
    wheel = Artifact("pip", "jax", link.name, link.as_uri(), "a" * 64, None)
    with pytest.raises(InstallError, match=f"cannot read {link}"):
        gather([wheel], cache=tmp_path / "cache")
