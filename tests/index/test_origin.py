"""When a URL is "under" a location: the comparison the lockfile-origin rule makes (issue 28).
Each case a hostile lockfile could try, beside the spellings of one location that must agree."""

from __future__ import annotations

import pytest

from gpuenv.index.origin import is_under, same_url

IDX = "https://idx.example/simple"


@pytest.mark.parametrize(
    "url",
    [
        "https://idx.example/simple/x/x-1.0-py3-none-any.whl",
        "https://IDX.Example/simple/x-1.0-py3-none-any.whl",  # a host has no case
        "HTTPS://idx.example/simple/x-1.0-py3-none-any.whl",
        "https://idx.example:443/simple/x-1.0-py3-none-any.whl",  # the default port, written
        "https://idx.example./simple/x-1.0-py3-none-any.whl",  # the root's trailing dot
        "https://idx.example/%73imple/x-1.0-py3-none-any.whl",  # an encoded letter is the letter
        "https://idx.example/simple/x-1.0-py3-none-any.whl#sha256=" + "a" * 64,
        "https://someone:pw@idx.example/simple/x-1.0-py3-none-any.whl",  # credentials: not compared
    ],
)
def test_a_file_under_the_index_is_under_it(url: str) -> None:
    for index in (
        IDX,
        IDX + "/",
        "https://idx.example:443/simple/",
        "https://u:p@idx.example/simple",
    ):
        assert is_under(url, index), (url, index)


@pytest.mark.parametrize(
    "url",
    [
        "https://idx.example/simple/../evil/x-1.0-py3-none-any.whl",  # a way round
        "https://idx.example/simple/%2e%2e/evil/x-1.0-py3-none-any.whl",  # the same, encoded
        "https://idx.example/simple/%2E%2E/evil/x-1.0-py3-none-any.whl",
        "https://idx.example/simple/./x-1.0-py3-none-any.whl",  # no dot segments at all
        "https://idx.example/simple%2F..%2Fevil/x-1.0-py3-none-any.whl",  # an encoded slash
        "https://idx.example/simple%5C..%5Cevil/x-1.0-py3-none-any.whl",  # an encoded backslash
        "https://idx.example@evil.example/simple/x-1.0-py3-none-any.whl",  # user info, not host
        "https://idx.example:pw@evil.example/simple/x-1.0-py3-none-any.whl",
        "https://evil.example/simple/x-1.0-py3-none-any.whl",
        "https://idx.example.evil.example/simple/x-1.0-py3-none-any.whl",
        "https://idx.example/simpler/x-1.0-py3-none-any.whl",  # a prefix of a name, not a folder
        "https://idx.example/SIMPLE/x-1.0-py3-none-any.whl",  # a path has case
        "https://idx.example/x-1.0-py3-none-any.whl",
        "https://idx.example/simple",  # the folder itself names no file
        "http://idx.example/simple/x-1.0-py3-none-any.whl",  # another scheme
        "https://idx.example:8443/simple/x-1.0-py3-none-any.whl",  # another port
        "https://idx.example:99999/simple/x-1.0-py3-none-any.whl",  # no port at all
        "https://[::1/simple/x-1.0-py3-none-any.whl",  # not a URL
        "file:///simple/x-1.0-py3-none-any.whl",
        "ftp://idx.example/simple/x-1.0-py3-none-any.whl",
        "//idx.example/simple/x-1.0-py3-none-any.whl",
    ],
)
def test_a_way_round_is_under_nothing(url: str) -> None:
    for index in (IDX, IDX + "/"):
        assert not is_under(url, index), (url, index)


def test_http_default_port() -> None:
    assert is_under("http://idx.example:80/simple/x.whl", "http://idx.example/simple/")
    assert not is_under("http://idx.example:443/simple/x.whl", "http://idx.example/simple/")


def test_a_page_covers_the_folder_it_is_in() -> None:
    page = "https://storage.example/jax-releases/jax_cuda_releases.html"
    assert is_under("https://storage.example/jax-releases/cuda12/jaxlib-0.4.30.whl", page)
    assert not is_under("https://storage.example/other/jaxlib-0.4.30.whl", page)
    assert not is_under("https://storage.example/jax-releases-evil/jaxlib-0.4.30.whl", page)


def test_file_urls() -> None:
    assert is_under("file:///opt/wheels/x-1.0-py3-none-any.whl", "file:///opt/wheels")
    assert is_under("file://localhost/opt/wheels/x-1.0-py3-none-any.whl", "file:///opt/wheels/")
    assert not is_under("file:///opt/wheels/../etc/x-1.0-py3-none-any.whl", "file:///opt/wheels")
    assert not is_under("file:///opt/wheelsx/x-1.0-py3-none-any.whl", "file:///opt/wheels")
    assert not is_under("file://server/opt/wheels/x-1.0-py3-none-any.whl", "file:///opt/wheels")
    assert not is_under("https://opt/wheels/x-1.0-py3-none-any.whl", "file:///opt/wheels")


def test_same_url() -> None:
    a = "https://files.example/p/x-1.0-py3-none-any.whl"
    assert same_url(a, "https://FILES.example:443/p/x-1.0-py3-none-any.whl#sha256=00")
    assert same_url(a, "https://files.example/p/x%2D1.0-py3-none-any.whl")
    assert not same_url(a, "https://files.example/p/x-1.0-py3-none-any.whl?v=2")
    assert not same_url(a, "https://files.example/q/../p/x-1.0-py3-none-any.whl")
    assert not same_url(a, "https://files.example@evil.example/p/x-1.0-py3-none-any.whl")


@pytest.mark.parametrize("root", ["https://idx.example", "https://idx.example/"])
def test_a_host_s_root_covers_that_host_only(root: str) -> None:
    assert is_under("https://idx.example/x-1.0-py3-none-any.whl", root)
    assert not is_under("https://idx.example@evil.example/x-1.0-py3-none-any.whl", root)
    assert not is_under("https://idx.example.evil.example/x-1.0-py3-none-any.whl", root)
    assert not is_under("https://idx.example:1@evil.example/x-1.0-py3-none-any.whl", root)


def test_an_index_s_credentials_go_to_its_own_host_only() -> None:
    from gpuenv.index.origin import has_credentials, with_credentials

    mine = ("https://alice:pw@idx.example/simple/", "https://plain.example/simple/")
    ok = with_credentials("https://idx.example/files/x-1.0-py3-none-any.whl", mine)
    assert ok == "https://alice:pw@idx.example/files/x-1.0-py3-none-any.whl"
    assert with_credentials("https://IDX.example:443/f/x.whl", mine).startswith("https://alice:pw@")
    for elsewhere in (
        "https://evil.example/files/x-1.0-py3-none-any.whl",
        "http://idx.example/files/x-1.0-py3-none-any.whl",  # not over plain http
        "https://idx.example:8443/files/x-1.0-py3-none-any.whl",
        "https://idx.example.evil.example/x-1.0-py3-none-any.whl",
        "https://plain.example/files/x-1.0-py3-none-any.whl",
    ):
        assert not has_credentials(with_credentials(elsewhere, mine)), elsewhere
    own = "https://bob:other@idx.example/x.whl"  # a URL's own stay as they are
    assert with_credentials(own, mine) == own
