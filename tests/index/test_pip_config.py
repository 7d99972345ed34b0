"""pip's configuration read without pip: locations, precedence, sections and variables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuenv.index.pip_config import PipConfigError, PipSettings, config_files, read_pip_settings

A, B, C, D = (f"https://mirror-{x}.example/simple" for x in "abcd")

XDG_GLOBAL = "xdg/pip/pip.conf"
ETC = "etc/pip.conf"
LEGACY = "home/.pip/pip.conf"
USER = "home/.config/pip/pip.conf"
SITE = "venv/pip.conf"
NAMED = "named.conf"


def ini(section: str = "global", **values: str) -> str:
    body = "".join(f"{k.replace('_', '-')} = {v}\n" for k, v in values.items())
    return f"[{section}]\n{body}"


def settings(tmp: Path, files: dict[str, str], env: dict[str, str], platform: str = "linux"):  # type: ignore[no-untyped-def]
    for rel, text in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    full = {"HOME": str(tmp / "home"), "XDG_CONFIG_DIRS": str(tmp / "xdg")}
    for key, value in env.items():
        full[key] = value.replace("TMP", str(tmp))
    return read_pip_settings(full, platform=platform, etc=str(tmp / "etc"))


# (files, environment, expected index-url, extra-index-urls, find-links, no-index)
CASES = {
    "nothing configured": ({}, {}, None, (), (), False),
    "global file under XDG_CONFIG_DIRS": ({XDG_GLOBAL: ini(index_url=A)}, {}, A, (), (), False),
    "/etc overrides the XDG global file": (
        {XDG_GLOBAL: ini(index_url=A), ETC: ini(index_url=B)},
        {},
        B,
        (),
        (),
        False,
    ),
    "user file overrides global": (
        {ETC: ini(index_url=A, find_links="/w"), USER: ini(index_url=B)},
        {},
        B,
        (),
        ("/w",),
        False,
    ),
    "new user file overrides the legacy ~/.pip": (
        {LEGACY: ini(index_url=A), USER: ini(index_url=B)},
        {},
        B,
        (),
        (),
        False,
    ),
    "XDG_CONFIG_HOME moves the user file": (
        {"cfg/pip/pip.conf": ini(index_url=C), USER: ini(index_url=B)},
        {"XDG_CONFIG_HOME": "TMP/cfg"},
        C,
        (),
        (),
        False,
    ),
    "site file ($VIRTUAL_ENV) overrides user": (
        {USER: ini(index_url=A), SITE: ini(index_url=B)},
        {"VIRTUAL_ENV": "TMP/venv"},
        B,
        (),
        (),
        False,
    ),
    "PIP_CONFIG_FILE overrides site and skips user files": (
        {USER: ini(extra_index_url=D), SITE: ini(index_url=A), NAMED: ini(index_url=C)},
        {"VIRTUAL_ENV": "TMP/venv", "PIP_CONFIG_FILE": "TMP/named.conf"},
        C,
        (),
        (),
        False,
    ),
    "PIP_CONFIG_FILE that does not exist keeps user files": (
        {USER: ini(index_url=A)},
        {"PIP_CONFIG_FILE": "TMP/absent.conf"},
        A,
        (),
        (),
        False,
    ),
    "PIP_CONFIG_FILE=os.devnull loads no file, variables still count": (
        {ETC: ini(index_url=A), USER: ini(find_links="/w")},
        {"PIP_CONFIG_FILE": os.devnull, "PIP_EXTRA_INDEX_URL": B},
        None,
        (B,),
        (),
        False,
    ),
    "[install] overrides [global] across files": (
        {ETC: ini("install", index_url=A), USER: ini(index_url=B)},
        {},
        A,
        (),
        (),
        False,
    ),
    "[download] and other sections are not install's": (
        {USER: ini(index_url=A) + ini("download", index_url=B) + ini("wheel", index_url=C)},
        {},
        A,
        (),
        (),
        False,
    ),
    "PIP_INDEX_URL overrides [install]": (
        {USER: ini("install", index_url=A)},
        {"PIP_INDEX_URL": B},
        B,
        (),
        (),
        False,
    ),
    "PIP_EXTRA_INDEX_URL replaces the files' list, space-separated": (
        {USER: ini(extra_index_url=f"{A} {B}")},
        {"PIP_EXTRA_INDEX_URL": f"{C}  {D}"},
        None,
        (C, D),
        (),
        False,
    ),
    "multi-line lists in a file": (
        {USER: f"[global]\nextra-index-url =\n    {A}\n    {B}\nfind-links = /w1 /w2\n"},
        {},
        None,
        (A, B),
        ("/w1", "/w2"),
        False,
    ),
    "PIP_FIND_LINKS": ({}, {"PIP_FIND_LINKS": "/w1 /w2"}, None, (), ("/w1", "/w2"), False),
    "an empty variable leaves the file's value": (
        {USER: ini(index_url=A)},
        {"PIP_INDEX_URL": ""},
        A,
        (),
        (),
        False,
    ),
    "an empty [install] value leaves [global]'s": (
        {USER: ini(index_url=A) + "[install]\nindex-url =\n"},
        {},
        A,
        (),
        (),
        False,
    ),
    "PIP_NO_INDEX drops every index, keeps find-links": (
        {USER: ini(index_url=A, extra_index_url=B, find_links="/w")},
        {"PIP_NO_INDEX": "yes"},
        None,
        (),
        ("/w",),
        True,
    ),
    "no-index = false in a file": (
        {USER: ini(index_url=A, no_index="false")},
        {},
        A,
        (),
        (),
        False,
    ),
    "PIP_NO_INDEX=0 overrides a file's true": (
        {USER: ini(index_url=A, no_index="true")},
        {"PIP_NO_INDEX": "0"},
        A,
        (),
        (),
        False,
    ),
    "underscores and -- in a file's keys": (
        {USER: f"[global]\nindex_url = {A}\n--extra-index-url = {B}\n"},
        {},
        A,
        (B,),
        (),
        False,
    ),
    "unrelated PIP_ variables are ignored": (
        {},
        {"PIP_DEFAULT_TIMEOUT": "60", "PIP_CERT": "/x"},
        None,
        (),
        (),
        False,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_precedence(tmp_path: Path, case: str) -> None:
    files, env, index, extras, links, no_index = CASES[case]
    got = settings(tmp_path, files, env)
    assert (got.index_url, got.extra_index_urls, got.find_links, got.no_index) == (
        index,
        extras,
        links,
        no_index,
    )


def test_sources_name_the_files_and_variables_used(tmp_path: Path) -> None:
    got = settings(tmp_path, {USER: ini(index_url=A)}, {"PIP_FIND_LINKS": "/w"})
    assert got.sources == (str(tmp_path / USER), "$PIP_FIND_LINKS")


def test_windows_locations(tmp_path: Path) -> None:
    env = {
        "USERPROFILE": str(tmp_path / "profile"),
        "APPDATA": str(tmp_path / "roaming"),
        "PROGRAMDATA": str(tmp_path / "programdata"),
    }
    files = config_files(env, platform="win32")
    assert files == [
        os.path.join(tmp_path / "programdata", "pip", "pip.ini"),
        os.path.join(tmp_path / "profile", "pip", "pip.ini"),
        os.path.join(tmp_path / "roaming", "pip", "pip.ini"),
    ]
    (tmp_path / "programdata" / "pip").mkdir(parents=True)
    (tmp_path / "programdata" / "pip" / "pip.ini").write_text(ini(index_url=A))
    (tmp_path / "roaming" / "pip").mkdir(parents=True)
    (tmp_path / "roaming" / "pip" / "pip.ini").write_text(ini(extra_index_url=B))
    got = read_pip_settings(env, platform="win32")
    assert (got.index_url, got.extra_index_urls) == (A, (B,))


def test_macos_user_folder_only_when_it_exists(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    linux_like = os.path.join(tmp_path, ".config", "pip", "pip.conf")
    assert config_files(env, platform="darwin")[-1] == linux_like
    (tmp_path / "Library" / "Application Support" / "pip").mkdir(parents=True)
    mac = os.path.join(tmp_path, "Library", "Application Support", "pip", "pip.conf")
    assert config_files(env, platform="darwin")[-1] == mac
    assert config_files(env, platform="darwin")[0] == "/Library/Application Support/pip/pip.conf"


# --- hostile input ------------------------------------------------------------------------------


def test_a_file_pip_would_refuse_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(PipConfigError, match=r"home/\.config/pip/pip\.conf cannot be read"):
        settings(tmp_path, {USER: "index-url = no section header\n"}, {})


def test_undecodable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / USER
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[global]\nindex-url = \xff\xfe\n")
    with pytest.raises(PipConfigError, match="cannot be read"):
        settings(tmp_path, {}, {})


def test_a_folder_where_the_file_should_be(tmp_path: Path) -> None:
    (tmp_path / USER).mkdir(parents=True)
    with pytest.raises(PipConfigError, match="is a folder"):
        settings(tmp_path, {}, {})


def test_a_dangling_link_is_skipped_like_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / USER).parent.mkdir(parents=True)
    (tmp_path / USER).symlink_to(tmp_path / "nowhere.conf")
    assert settings(tmp_path, {}, {}) == PipSettings()


def test_a_link_to_a_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.conf").write_text(ini(index_url=A))
    (tmp_path / USER).parent.mkdir(parents=True)
    (tmp_path / USER).symlink_to(tmp_path / "real.conf")
    assert settings(tmp_path, {}, {}).index_url == A


def test_a_no_index_value_pip_would_refuse(tmp_path: Path) -> None:
    with pytest.raises(PipConfigError, match="PIP_NO_INDEX"):
        settings(tmp_path, {}, {"PIP_NO_INDEX": "maybe"})


def test_a_fifo_is_refused_rather_than_read(tmp_path: Path) -> None:
    (tmp_path / USER).parent.mkdir(parents=True)
    os.mkfifo(tmp_path / USER)  # opening it would block forever
    with pytest.raises(PipConfigError, match="not a regular file"):
        settings(tmp_path, {}, {})


@pytest.mark.parametrize(
    "settings",
    [
        PipSettings(index_url="https://m.example/simple"),
        PipSettings(extra_index_urls=("https://x.example/simple",)),
        PipSettings(find_links=("/opt/wheels",)),
        PipSettings(no_index=True),
    ],
)
def test_any_one_setting_counts(settings: PipSettings) -> None:
    assert settings.any()
    assert not PipSettings(sources=("pip.conf",)).any()  # a file that set nothing
