"""Which indexes gpuenv hands to uv and uses itself: uv's configuration first, then pip's."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.index import config as indexes
from gpuenv.index.config import (
    IndexConfig,
    IndexConfigError,
    default_index_url,
    user_index_config,
    uv_builtin_default_index,
)
from gpuenv.index.pip_config import read_pip_settings
from gpuenv.uv.binary import find_uv

MIRROR = "https://mirror.example/simple"
EXTRA = "https://extra.example/simple"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment with no configuration of this machine: empty home, no global pip files."""
    (tmp_path / "home").mkdir()
    no_etc = functools.partial(read_pip_settings, etc=str(tmp_path / "etc"))
    monkeypatch.setattr(indexes, "read_pip_settings", no_etc)
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "PATH": os.environ.get("PATH", ""),
    }


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_pip_settings_become_uv_arguments(home: dict[str, str], tmp_path: Path) -> None:
    links = tmp_path / "wheels"
    links.mkdir()
    write(
        Path(home["XDG_CONFIG_HOME"]) / "pip" / "pip.conf",
        f"[global]\nindex-url = {MIRROR}\nextra-index-url = {EXTRA}\nfind-links = {links}\n",
    )
    config = user_index_config(home)
    assert config.uv_args() == [
        "--default-index",
        MIRROR,
        "--index",
        EXTRA,
        "--find-links",
        str(links),
        "--index-strategy",
        "unsafe-best-match",
    ]
    assert config.origin.startswith("pip configuration (") and "pip.conf" in config.origin


def test_pip_no_index_reaches_uv(home: dict[str, str], tmp_path: Path) -> None:
    links = tmp_path / "wheels"
    links.mkdir()
    env = {**home, "PIP_NO_INDEX": "1", "PIP_INDEX_URL": MIRROR, "PIP_FIND_LINKS": str(links)}
    config = user_index_config(env)
    assert config.uv_args() == ["--no-index", "--find-links", str(links)]
    assert config.all_indexes() == ()


def test_missing_find_links_folder_is_a_note_not_an_argument(
    home: dict[str, str], tmp_path: Path
) -> None:
    env = {**home, "PIP_FIND_LINKS": str(tmp_path / "gone")}
    config = user_index_config(env)
    assert config.find_links == ()
    assert config.notes == (f"pip setting {tmp_path / 'gone'} skipped: the folder does not exist",)


def test_uv_variables_win_over_pip(home: dict[str, str]) -> None:
    env = {**home, "UV_DEFAULT_INDEX": EXTRA, "PIP_INDEX_URL": MIRROR}
    assert user_index_config(env) == IndexConfig(origin="uv environment variables")
    assert default_index_url(env) == EXTRA + "/"


def test_uv_toml_default_index_wins_over_pip(home: dict[str, str]) -> None:
    uv_toml = Path(home["XDG_CONFIG_HOME"]) / "uv" / "uv.toml"
    write(uv_toml, f'[[index]]\nurl = "{EXTRA}"\n\n[[index]]\nurl = "{MIRROR}"\ndefault = true\n')
    env = {**home, "PIP_INDEX_URL": "https://pip-only.example/simple"}
    assert user_index_config(env).origin == f"uv configuration ({uv_toml})"
    assert default_index_url(env) == MIRROR + "/"


def test_broken_uv_toml_is_a_clear_error(home: dict[str, str]) -> None:
    write(Path(home["XDG_CONFIG_HOME"]) / "uv" / "uv.toml", 'index-url = "unterminated\n')
    with pytest.raises(IndexConfigError, match=r"uv\.toml cannot be read"):
        default_index_url(home)


def test_pip_index_used_for_gpuenv_lookups(home: dict[str, str]) -> None:
    write(Path(home["XDG_CONFIG_HOME"]) / "pip" / "pip.conf", f"[install]\nindex-url = {MIRROR}/\n")
    assert default_index_url(home) == MIRROR + "/"


def test_unconfigured_default_is_uvs_own(home: dict[str, str]) -> None:
    help_text = subprocess.run(
        [find_uv(), "pip", "compile", "--help"], capture_output=True, text=True, check=True
    ).stdout
    got = default_index_url(home)
    assert got.startswith("https://") and got.endswith("/simple/")
    assert f"<{got.rstrip('/')}>" in help_text


@pytest.mark.parametrize("columns", ["40", "60"])
def test_uvs_own_default_is_read_whatever_the_terminal_width(
    home: dict[str, str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    wide = default_index_url(home)
    uv_builtin_default_index.cache_clear()
    monkeypatch.setenv("COLUMNS", columns)  # uv wraps its help to it
    assert default_index_url(home) == wide


def test_a_default_stated_across_lines_is_read(tmp_path: Path) -> None:
    fake = tmp_path / "uv"
    fake.write_text(
        "#!/bin/sh\necho '      --default-index <URL>   The index (by'\n"
        "echo '                              default: <https://index.example/simple>)'\n"
    )
    fake.chmod(0o755)
    assert uv_builtin_default_index(str(fake)) == "https://index.example/simple/"


def test_uv_without_a_stated_default_is_an_actionable_error(tmp_path: Path) -> None:
    fake = tmp_path / "uv"
    fake.write_text("#!/bin/sh\necho 'no defaults here'\n")
    fake.chmod(0o755)
    with pytest.raises(IndexConfigError, match="set PIP_INDEX_URL"):
        uv_builtin_default_index(str(fake))


def test_broken_pip_conf_stops_lock_with_exit_2(home: dict[str, str], tmp_path: Path) -> None:
    write(Path(home["XDG_CONFIG_HOME"]) / "pip" / "pip.conf", "index-url = no section\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(home, GPUENV_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", "lock", "jax", "--no-gpu", "--no-probe"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "pip.conf cannot be read" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_host_name_of_the_default_index_in_the_source() -> None:
    repo = Path(__file__).resolve().parents[2]
    host = "py" + "pi" + ".org"
    found = subprocess.run(
        ["git", "-C", str(repo), "grep", "-l", "-i", "-F", host, "--", ".", ":!*.whl"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode == 128:
        pytest.skip("not a git checkout")
    assert (found.returncode, found.stdout.split()) == (1, [])


def test_a_named_uv_index_in_a_variable_is_its_url() -> None:
    # uv's UV_INDEX takes `name=url` items beside plain URLs
    from gpuenv.index.config import uv_sources

    found = uv_sources({"UV_INDEX": "mirror=https://m.example/simple https://plain.example/simple"})
    assert found.indexes == ("https://m.example/simple", "https://plain.example/simple")
