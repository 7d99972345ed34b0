"""`--portable` against mirrors configured through uv or pip, and wheels no index publishes.

Local PEP 503 indexes stand in for a lab's mirrors: mirror A and mirror B hold byte-identical
wheels at different places (two mirrors of one index), a tampered mirror holds a numpy of the
same name with other bytes, and a wheelhouse folder (find-links) holds a torch `+cpu` wheel that
no index has. The lock runs the real uv; install resolves through gpuenv's own look-ups and uv.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from gpuenv.envs.artifacts import artifacts_of, gather
from gpuenv.envs.errors import InstallError
from gpuenv.index.config import IndexConfig, IndexConfigError, uv_sources
from gpuenv.lock import LockOptions, LockResult, lock_plan
from gpuenv.lock.load import load_locked
from gpuenv.lock.portability import Sources, not_portable
from gpuenv.lock.pypi import PipArtifact
from gpuenv.resolve.plan import PipRequirement, Plan
from installrepos import gpuenv, jax_plan, run_in
from localrepos import build_simple_index, build_wheel, sha256_file

TORCH_CPU = "torch-2.13.0+cpu-py3-none-any.whl"


@dataclass(frozen=True)
class Mirrors:
    a: str  # file:// URL of mirror A's simple/ folder
    b: str
    tampered: str
    wheelhouse: Path  # a find-links folder with the only torch 2.13.0+cpu
    sha256: dict[str, str]  # wheel file name -> sha256 of the bytes both mirrors serve


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory) -> Mirrors:
    root = tmp_path_factory.mktemp("mirrors")
    wheels = [
        build_wheel(root / "wheels", "jax", "0.4.30", requires=["numpy"]),
        build_wheel(root / "wheels", "numpy", "1.26.4"),
    ]
    other_numpy = build_wheel(
        root / "other", "numpy", "1.26.4", files={"numpy/__init__.py": "print('not numpy')\n"}
    )
    house = root / "wheelhouse"
    build_wheel(house, "torch", "2.13.0+cpu")
    return Mirrors(
        a=build_simple_index(root / "mirror-a", wheels),
        b=build_simple_index(root / "mirror-b", wheels),
        tampered=build_simple_index(root / "tampered", [wheels[0], other_numpy]),
        wheelhouse=house,
        sha256={w.name: sha256_file(w) for w in wheels},
    )


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither this machine's pip nor its uv configuration: each test sets its own."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("UV_CONFIG_FILE", raising=False)


def configure(monkeypatch: pytest.MonkeyPatch, where: Path, how: str, url: str) -> None:
    """Make `url` the machine's mirror, the way `how` says (the other ways cleared)."""
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("UV_CONFIG_FILE", raising=False)
    for var in ("UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"):
        monkeypatch.delenv(var, raising=False)
    where.mkdir(parents=True, exist_ok=True)
    if how == "uv.toml":
        uv_toml(monkeypatch, where, f'[[index]]\nurl = "{url}"\ndefault = true\n')
    elif how == "pip.conf":
        (where / "pip.conf").write_text(f"[global]\nindex-url = {url}\n", encoding="utf-8")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(where / "pip.conf"))
    else:
        monkeypatch.setenv(how, url)


def uv_toml(monkeypatch: pytest.MonkeyPatch, where: Path, text: str) -> Path:
    path = where / "uv.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.delenv("UV_NO_CONFIG", raising=False)
    monkeypatch.setenv("UV_CONFIG_FILE", str(path))
    return path


def lock(plan: Plan, out: Path, **kw: Any) -> LockResult:
    # indexes=None: the user's configuration, as `gpuenv lock` reads it
    return lock_plan(plan, LockOptions(output=out, exclude_newer="none", **kw))


def metadata(lockfile: Path) -> dict[str, str]:
    data = yaml.safe_load(lockfile.read_text(encoding="utf-8"))
    return dict(data["metadata"]["custom_metadata"])


def with_torch_cpu(plan: Plan) -> Plan:
    return dataclasses.replace(plan, pip=(*plan.pip, PipRequirement("torch==2.13.0+cpu")))


def folder_of(index_url: str) -> str:
    """The URL prefix of everything a local index holds (its files sit beside simple/)."""
    return index_url.rsplit("/simple/", 1)[0] + "/"


# --- 1. a mirror set through uv only; installed where the mirror is set another way ---


@pytest.mark.parametrize(
    ("lock_with", "install_with"),
    [
        ("uv.toml", "pip.conf"),
        ("UV_DEFAULT_INDEX", "UV_INDEX"),
        ("UV_INDEX", "uv.toml"),
        ("UV_INDEX", "UV_DEFAULT_INDEX"),
    ],
)
def test_uv_configured_mirror_locks_portable_and_installs_from_another(
    lock_with: str,
    install_with: str,
    mirrors: Mirrors,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(monkeypatch, tmp_path / "locker", lock_with, mirrors.a)
    out = tmp_path / "jax.conda-lock.yml"
    lock(jax_plan(), out, portable=True)
    locked = load_locked(out)
    assert {p.name for p in locked.pip} == {"jax", "numpy"}
    for entry in locked.pip:
        assert entry.url == f"index:///{entry.name}/{entry.filename}"
        # the bytes of the mirror uv was configured with (no other index was reachable)
        assert entry.sha256 == mirrors.sha256[entry.filename]
    assert folder_of(mirrors.a) not in out.read_text()
    assert "gpuenv.not_portable" not in metadata(out)

    configure(monkeypatch, tmp_path / "installer", install_with, mirrors.b)
    from gpuenv.index.config import user_index_config

    sources = gather(artifacts_of(locked), cache=tmp_path / "cache", indexes=user_index_config())
    assert sorted(s.artifact.name for s in sources) == ["jax", "numpy"]
    assert all(s.url.startswith(folder_of(mirrors.b)) for s in sources), [s.url for s in sources]


def test_portable_entries_found_in_a_uv_find_links_folder_through_a_link(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path / "locker", "UV_DEFAULT_INDEX", mirrors.a)
    out = tmp_path / "jax.conda-lock.yml"
    lock(jax_plan(), out, portable=True)
    # an offline machine: no index, a wheelhouse (reached through a link) with the same files
    house = tmp_path / "house"
    house.mkdir()
    for name in mirrors.sha256:
        (house / name).write_bytes(
            Path(mirrors.a[len("file://") :], "..", "files", name).read_bytes()
        )
    link = tmp_path / "wheels"
    link.symlink_to(house, target_is_directory=True)
    configure(monkeypatch, tmp_path / "installer", "UV_FIND_LINKS", str(link))
    sources = gather(artifacts_of(load_locked(out)), cache=tmp_path / "cache", indexes=None)
    assert sorted(s.url for s in sources) == sorted((link / n).as_uri() for n in mirrors.sha256)


def test_portable_install_from_a_uv_index_mirror_checks_hashes(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # caches of its own: which copy of numpy a shared cache holds depends on the tests before
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "gpuenv-cache"))
    monkeypatch.setenv("COLUMNS", "60")  # uv wraps its error to it: gpuenv reads it whole
    configure(monkeypatch, tmp_path / "locker", "UV_DEFAULT_INDEX", mirrors.a)
    out = tmp_path / "jax.conda-lock.yml"
    lock(jax_plan(), out, portable=True)

    # the same files on another mirror, known to this machine through UV_INDEX only
    configure(monkeypatch, tmp_path / "good", "UV_INDEX", mirrors.b)
    env = tmp_path / "env"
    done = gpuenv("install", str(out), "--prefix", str(env), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    python = env / "bin" / "python"
    assert run_in(python, "import jax, numpy; print(jax.__version__)") == "0.4.30"

    # a mirror whose numpy has the same name and other bytes: refused, nothing installed
    configure(monkeypatch, tmp_path / "bad", "UV_INDEX", mirrors.tampered)
    bad = tmp_path / "bad-env"
    done = gpuenv("install", str(out), "--prefix", str(bad), "--no-smoke-test")
    assert done.returncode == 1, done.stderr
    assert "does not match the lockfile's sha256" in done.stderr
    assert f"numpy @ {folder_of(mirrors.tampered)}files/numpy-1.26.4" in done.stderr
    assert "Traceback" not in done.stderr
    assert not bad.exists()


def test_uv_sources_reads_variables_and_uv_toml(tmp_path: Path) -> None:
    path = tmp_path / "uv.toml"
    path.write_text(
        'find-links = ["/opt/wheels"]\n\n'
        '[[index]]\nname = "lab"\nurl = "https://lab.example/simple"\n\n'
        '[[index]]\nurl = "https://mirror.example/simple"\ndefault = true\n\n'
        '[[index]]\nurl = "https://wheels.example/cpu.html"\nformat = "flat"\n\n'
        '[pip]\nextra-index-url = ["https://extra.example/simple"]\n',
        encoding="utf-8",
    )
    found = uv_sources(
        {"UV_CONFIG_FILE": str(path), "UV_INDEX": "https://first.example/simple lab"}
    )
    assert found.indexes == (
        "https://first.example/simple",
        "https://lab.example/simple",  # by name, and again from the file: once
        "https://extra.example/simple",
    )
    assert found.default_index == "https://mirror.example/simple"
    assert found.find_links == ("https://wheels.example/cpu.html", Path("/opt/wheels").as_uri())
    assert uv_sources({"UV_FIND_LINKS": "/a,/b"}).find_links == (
        Path("/a").as_uri(),
        Path("/b").as_uri(),
    )
    # the variable is uv's command line: it wins over the file's default index
    both = uv_sources({"UV_CONFIG_FILE": str(path), "UV_DEFAULT_INDEX": "https://v.example/s"})
    assert both.default_index == "https://v.example/s"
    # UV_NO_CONFIG stops uv's discovery, not the file UV_CONFIG_FILE names: uv 0.13 still reads
    # (and fails on) an explicit file under UV_NO_CONFIG=1, so gpuenv reads it too
    assert uv_sources({"UV_CONFIG_FILE": str(path), "UV_NO_CONFIG": "1"}) == uv_sources(
        {"UV_CONFIG_FILE": str(path)}
    )


# --- 2. a wheel only a find-links folder has ---


@pytest.mark.parametrize("links_with", ["UV_FIND_LINKS", "PIP_FIND_LINKS", "uv.toml"])
def test_find_links_wheel_keeps_its_path_and_says_so(
    links_with: str, mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    house = str(mirrors.wheelhouse)
    if links_with == "uv.toml":
        uv_toml(
            monkeypatch,
            tmp_path,
            f'find-links = ["{house}"]\n[[index]]\nurl = "{mirrors.a}"\ndefault = true\n',
        )
    else:
        # pip's settings reach uv only where uv has no index configuration of its own
        mirror_with = "pip.conf" if links_with == "PIP_FIND_LINKS" else "UV_DEFAULT_INDEX"
        configure(monkeypatch, tmp_path, mirror_with, mirrors.a)
        monkeypatch.setenv(links_with, house)
    out = tmp_path / "torch.conda-lock.yml"
    result = lock(with_torch_cpu(jax_plan()), out, portable=True)
    pip = {p.name: p for p in load_locked(out).pip}
    assert unquote(pip["torch"].url) == f"file://{mirrors.wheelhouse / TORCH_CPU}"
    assert not pip["torch"].portable
    assert pip["jax"].portable and pip["numpy"].portable  # index wheels stay portable
    why = f"only in the find-links folder {house}"
    assert metadata(out)["gpuenv.not_portable"] == f"torch: {why}"
    assert "# Not portable: torch, named by a path on the machine that locked it" in out.read_text()
    assert [n for n in result.notes if n.startswith("not portable")] == [
        f"not portable: torch 2.13.0+cpu is {why}; the lockfile names it by that path (with its"
        " sha256), so a machine installing it needs the same file there (recorded as"
        " gpuenv.not_portable in the lockfile)"
    ]


def test_without_portable_nothing_is_said(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path, "UV_DEFAULT_INDEX", mirrors.a)
    monkeypatch.setenv("UV_FIND_LINKS", str(mirrors.wheelhouse))
    out = tmp_path / "torch.conda-lock.yml"
    result = lock(with_torch_cpu(jax_plan()), out)
    assert not any(p.portable for p in load_locked(out).pip)
    assert "gpuenv.not_portable" not in metadata(out)
    assert not [n for n in result.notes if "not portable" in n]
    assert "Not portable" not in out.read_text()


def test_lock_command_warns_about_a_find_links_wheel(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path, "UV_DEFAULT_INDEX", mirrors.a)
    monkeypatch.setenv("UV_FIND_LINKS", str(mirrors.wheelhouse))
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(with_torch_cpu(jax_plan()).to_json()), encoding="utf-8")
    out = tmp_path / "torch.conda-lock.yml"
    done = gpuenv("lock", "--plan", str(plan_file), "--portable", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert (
        f"not portable: torch 2.13.0+cpu is only in the find-links folder {mirrors.wheelhouse}"
        in (done.stderr)
    )
    done = gpuenv("lock", "--plan", str(plan_file), "--portable", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    notes = json.loads(done.stdout)["notes"]
    assert any(n.startswith("not portable: torch 2.13.0+cpu") for n in notes)


def test_find_links_folder_through_a_link_is_named_with_its_target(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "wheels-link"
    link.symlink_to(mirrors.wheelhouse, target_is_directory=True)
    configure(monkeypatch, tmp_path, "UV_DEFAULT_INDEX", mirrors.a)
    monkeypatch.setenv("UV_FIND_LINKS", str(link))
    out = tmp_path / "torch.conda-lock.yml"
    lock(with_torch_cpu(jax_plan()), out, portable=True)
    torch = next(p for p in load_locked(out).pip if p.name == "torch")
    assert not torch.portable
    assert metadata(out)["gpuenv.not_portable"] == (
        f"torch: only in the find-links folder {link} (a link to {mirrors.wheelhouse})"
    )


def test_a_wheel_whose_folder_is_gone_is_named_at_install(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    house = tmp_path / "house"
    shutil.copytree(mirrors.wheelhouse, house)
    configure(monkeypatch, tmp_path, "UV_DEFAULT_INDEX", mirrors.a)
    monkeypatch.setenv("UV_FIND_LINKS", str(house))
    out = tmp_path / "torch.conda-lock.yml"
    lock(with_torch_cpu(jax_plan()), out, portable=True)
    shutil.rmtree(house)  # another machine: the same mirror, no wheelhouse
    with pytest.raises(
        InstallError, match=re.escape(f"cannot read {house / TORCH_CPU}: no such file here")
    ):
        gather(artifacts_of(load_locked(out)), cache=tmp_path / "cache", indexes=IndexConfig())


def artifact(url: str, index: str | None = None) -> PipArtifact:
    return PipArtifact("numpy", "1.26.4", url, "0" * 64, index)


def test_only_index_files_count_as_portable(mirrors: Mirrors, tmp_path: Path) -> None:
    listed = f"{folder_of(mirrors.a)}files/numpy-1.26.4-py3-none-any.whl"
    stray = tmp_path / "numpy-1.26.4-py3-none-any.whl"
    stray.write_bytes(b"")
    on_a = Sources(indexes=(mirrors.a,))
    assert not_portable([artifact(listed)], on_a) == {}
    # the same file with no index configured that lists it: a local file, never portable
    assert not_portable([artifact(listed)], Sources()) == {
        "numpy": f"a local file ({listed[len('file://') :]}) on no index"
    }
    # a local file of the same name that the index does not list
    assert "numpy" in not_portable([artifact(stray.as_uri())], on_a)
    # from an http index: portable; from a framework's own local index: not
    assert (
        not_portable([artifact("https://files.example/numpy-1.26.4-py3-none-any.whl")], on_a) == {}
    )
    assert "numpy" in not_portable([artifact(listed, index=mirrors.a)], on_a)
    # a wheel under an http find-links folder
    page = Sources(find_links=("https://wheels.example/cpu/",))
    url = "https://wheels.example/cpu/numpy-1.26.4-py3-none-any.whl"
    assert not_portable([artifact(url)], page) == {
        "numpy": "only on the find-links page https://wheels.example/cpu/"
    }


# --- 3. hostile configuration: refused with one clear message ---

HOSTILE = [
    ("https://mirror.example/simple/../../private/", "'..' segment"),
    ("https://mirror.example/simple/%2e%2e/private/", "'..' segment"),
    ("ftp://mirror.example/simple/", "ftp: URL"),
    ("javascript:alert(1)", "javascript: URL"),
    ("mirror/simple", "relative path"),
    ("https:///simple", "names no host"),
]


@pytest.mark.parametrize(("url", "says"), HOSTILE)
def test_hostile_uv_toml_index_is_refused_by_a_portable_lock(
    url: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = uv_toml(monkeypatch, tmp_path, f'[[index]]\nurl = "{url}"\ndefault = true\n')
    out = tmp_path / "x.conda-lock.yml"
    with pytest.raises(IndexConfigError) as err:
        lock(jax_plan(), out, portable=True)
    assert str(path) in str(err.value) and says in str(err.value)
    assert not out.exists()


def test_hostile_variables_are_refused(tmp_path: Path) -> None:
    with pytest.raises(IndexConfigError, match=r"UV_INDEX: .*'\.\.' segment"):
        uv_sources({"UV_INDEX": "file:///srv/index/../../etc/"})
    with pytest.raises(IndexConfigError, match=r"UV_FIND_LINKS: .*relative path"):
        uv_sources({"UV_FIND_LINKS": "wheels"})
    with pytest.raises(IndexConfigError, match=r"UV_DEFAULT_INDEX: .*gopher: URL"):
        uv_sources({"UV_DEFAULT_INDEX": "gopher://mirror.example/"})
    path = tmp_path / "uv.toml"
    path.write_text('find-links = "/opt/wheels"\n', encoding="utf-8")
    with pytest.raises(IndexConfigError, match="expected a list"):
        uv_sources({"UV_CONFIG_FILE": str(path)})
    path.write_text("[[index]]\nurl = 3\n", encoding="utf-8")
    with pytest.raises(IndexConfigError, match="expected a URL"):
        uv_sources({"UV_CONFIG_FILE": str(path)})


def test_hostile_uv_toml_refused_by_the_commands(
    mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path / "locker", "UV_DEFAULT_INDEX", mirrors.a)
    out = tmp_path / "jax.conda-lock.yml"
    lock(jax_plan(), out, portable=True)
    monkeypatch.delenv("UV_DEFAULT_INDEX")
    uv_toml(monkeypatch, tmp_path, '[[index]]\nurl = "ftp://mirror.example/simple/"\n')
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(jax_plan().to_json()), encoding="utf-8")
    for args in (
        ("lock", "--plan", str(plan_file), "--portable", "-o", str(tmp_path / "y.conda-lock.yml")),
        ("install", str(out), "--prefix", str(tmp_path / "env")),
    ):
        done = gpuenv(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "ftp: URL" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "env").exists() and not (tmp_path / "y.conda-lock.yml").exists()


def test_the_probe_before_a_lock_asks_a_uv_only_mirror(
    kb: Any, mirrors: Mirrors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.lock.availability import gather as probe

    configure(monkeypatch, tmp_path, "UV_INDEX", mirrors.a)
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple/")  # nothing answers
    available = probe(kb, ["jax"], "linux-64", IndexConfig())
    assert mirrors.a in available.versions["jax"]["0.4.30"]
    # a location gpuenv cannot read is left unprobed, and named where unreachable ones are
    monkeypatch.setenv("UV_INDEX", "ftp://mirror.example/simple/")
    available = probe(kb, ["jax"], "linux-64", IndexConfig())
    assert any(
        "UV_INDEX: 'ftp://mirror.example/simple/' is a ftp: URL" in u for u in available.unreachable
    )
