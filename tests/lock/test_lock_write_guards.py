"""The lock writers where no other test looks (lock-write's mutation survivors,
benchmarks/mutation/lock-write.md): which wheel a lock keeps when uv lists several for one
package, and what an unreachable conda channel's error quotes of rattler's message."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

import gpuenv.lock.conda
from gpuenv.conda.client import CondaError
from gpuenv.index.config import IndexConfig
from gpuenv.lock.conda import solve_conda
from gpuenv.lock.errors import SourceUnreachableError
from gpuenv.lock.pipeline import plan_changes
from gpuenv.lock.pypi import PipCompile, pip_request
from installrepos import jax_plan

SHA = {"a": "a" * 64, "b": "b" * 64, "c": "c" * 64}


def _fake_uv(
    tmp_path: Path, packages: list[dict[str, object]], *, code: int = 0, stderr: str = ""
) -> str:
    """A uv that writes this pylock.toml wherever --output-file says, prints `stderr` and
    exits with `code`."""
    lines = ['lock-version = "1.0"', 'created-by = "uv"', ""]
    for package in packages:
        lines += ["[[packages]]", f"name = {json.dumps(package['name'])}"]
        lines += [f"version = {json.dumps(package['version'])}", "wheels = ["]
        for url, sha, *size in package["wheels"]:  # type: ignore[attr-defined]
            sized = f", size = {size[0]}" if size else ""
            lines.append(
                f"  {{ url = {json.dumps(url)}{sized}, hashes = {{ sha256 = {json.dumps(sha)} }} }},"
            )
        lines += ["]", ""]
    pylock = tmp_path / "answer.toml"
    pylock.write_text("\n".join(lines), encoding="utf-8")
    uv = tmp_path / "uv"
    uv.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        "out = sys.argv[sys.argv.index('--output-file') + 1]\n"
        f"shutil.copyfile({str(pylock)!r}, out)\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n",
        encoding="utf-8",
    )
    os.chmod(uv, 0o755)
    return str(uv)


def _locked(tmp_path: Path, packages: list[dict[str, object]]) -> list[tuple[str, str, str]]:
    plan = jax_plan("0.4.30")
    uv = _fake_uv(tmp_path, packages)
    config = IndexConfig(index_url="https://pypi.example/simple/", origin="test")
    lock = PipCompile(pip_request(plan, config, None, uv=uv), plan).result()
    return [(a.name, a.url, a.sha256) for a in lock.artifacts]


def test_of_several_wheels_uv_lists_the_lock_keeps_the_first_url_whatever_their_order(
    tmp_path: Path,
) -> None:
    base = "https://files.example/"
    listed = [
        (base + "jax-0.4.30-py3-none-manylinux.whl", SHA["c"]),
        (base + "jax-0.4.30-py3-none-any.whl", SHA["a"]),
        (base + "jax-0.4.30-py3-none-macosx.whl", SHA["b"]),
    ]
    for order in (listed, listed[::-1], listed[1:] + listed[:1]):
        got = _locked(tmp_path, [{"name": "jax", "version": "0.4.30", "wheels": order}])
        assert got == [("jax", base + "jax-0.4.30-py3-none-any.whl", SHA["a"])]
    # one wheel: that one
    one = [{"name": "jax", "version": "0.4.30", "wheels": listed[:1]}]
    assert _locked(tmp_path, one) == [("jax", listed[0][0], SHA["c"])]


def test_an_unreachable_channel_quotes_the_first_line_of_rattler_s_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = dataclasses.replace(
        jax_plan("0.4.30", conda=("cudatoolkit=11.2",)), platform="linux-64", python="3.12"
    )
    message = (
        "  error sending request for url (https://conda.example/main/linux-64/repodata.json)\n"
        "Caused by: dns error: failed to lookup address information\n"
        "Caused by: Name or service not known\n"
    )

    def unreachable(request: dict[str, object]) -> dict[str, object]:
        raise CondaError(message)

    monkeypatch.setattr(gpuenv.lock.conda, "run_rattler", unreachable)
    with pytest.raises(SourceUnreachableError) as err:
        solve_conda(plan, channels=("https://conda.example/main",))
    text = str(err.value)
    assert (
        "(error sending request for url (https://conda.example/main/linux-64/repodata.json))"
        in text
    )
    assert "Caused by" not in text and "\n" not in text


def test_a_wheel_beside_a_find_links_page_or_inside_its_folder_is_named_by_it() -> None:
    from gpuenv.lock.portability import Sources, not_portable
    from gpuenv.lock.pypi import PipArtifact

    page = "https://storage.example/jax-releases/jax_cuda_releases.html"
    folder = "https://files.example/links"
    wheels = [
        PipArtifact(
            "jaxlib",
            "0.4.30",
            "https://storage.example/jax-releases/cuda12/jaxlib-0.4.30-cp312-cp312-manylinux2014_x86_64.whl",
            SHA["a"],
            None,
        ),
        PipArtifact(
            "numpy",
            "2.0.0",
            f"{folder}/numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl",
            SHA["b"],
            None,
        ),
        PipArtifact(
            "scipy",
            "1.14.0",
            "https://pypi.example/files/scipy-1.14.0-cp312-cp312-manylinux_2_17_x86_64.whl",
            SHA["c"],
            None,
        ),
    ]
    assert not_portable(wheels, Sources(find_links=(page, folder + "/"))) == {
        "jaxlib": f"only on the find-links page {page}",
        "numpy": f"only on the find-links page {folder}/",
    }


def test_a_local_wheel_nothing_configured_offers_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv's answer may name only local files the user's find-links folders (or file://
    indexes) hold: one from anywhere else on this machine is refused, even after one that
    is fine."""
    from gpuenv.lock.errors import LockError
    from gpuenv.lock.portability import refuse_foreign_files
    from gpuenv.lock.pypi import PipArtifact

    for name in list(os.environ):
        if name.startswith("UV_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.chdir(tmp_path)
    links = tmp_path / "links"
    elsewhere = tmp_path / "planted"
    links.mkdir()
    elsewhere.mkdir()
    ok = PipArtifact("aa", "1.0", (links / "aa-1.0-py3-none-any.whl").as_uri(), SHA["a"], None)
    bad = PipArtifact("bb", "2.0", (elsewhere / "bb-2.0-py3-none-any.whl").as_uri(), SHA["b"], None)
    config = IndexConfig(find_links=(str(links),), origin="test")
    refuse_foreign_files([ok], config)
    with pytest.raises(
        LockError, match=r"none of your find-links folders .*: bb 2\.0 from "
    ) as err:
        refuse_foreign_files([ok, bad], config)
    assert "aa 1.0" not in str(err.value)


@pytest.mark.parametrize(
    ("stderr", "unsatisfiable"),
    [
        ("  x No solution found when resolving dependencies:\n  Because jax==9 ...\n", True),
        ("error: the requirements are unsatisfiable\n", True),
        ("error: something else went wrong\n", False),
    ],
    ids=["no-solution", "unsatisfiable", "other"],
)
def test_uv_s_words_for_a_conflict_make_an_unsatisfiable_error(
    stderr: str, unsatisfiable: bool, tmp_path: Path
) -> None:
    from gpuenv.lock.errors import LockError, UnsatisfiableError

    plan = jax_plan("0.4.30")
    uv = _fake_uv(tmp_path, [], code=1, stderr=stderr)
    config = IndexConfig(index_url="https://pypi.example/simple/", origin="test")
    with pytest.raises(LockError) as err:
        PipCompile(pip_request(plan, config, None, uv=uv), plan).result()
    assert isinstance(err.value, UnsatisfiableError) is unsatisfiable
    assert stderr.strip().splitlines()[-1].strip() in str(err.value)


@pytest.mark.parametrize("fmt", ["conda-lock", "pylock"])
def test_the_header_s_up_to_date_line_is_the_caller_s_or_the_check_command(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setup's lockfiles say how they are made current (no --check); a plain lock names the
    --check command."""
    from gpuenv.lock.header import CHECK_LINE
    from gpuenv.lock.pipeline import LockOptions, lock_plan

    config = _jax_0_4_30_from_links(tmp_path, monkeypatch)
    for up_to_date, line in ((None, CHECK_LINE), ("run `gpuenv setup` again", None)):
        name = "plain" if up_to_date is None else "setup"
        out = tmp_path / (f"pylock.{name}.toml" if fmt == "pylock" else f"{name}.conda-lock.yml")
        options = LockOptions(
            output=out, indexes=config, exclude_newer="none", format=fmt, up_to_date=up_to_date
        )
        lock_plan(jax_plan("0.4.30"), options)
        said = [ln for ln in out.read_text(encoding="utf-8").splitlines() if "Up to date?" in ln]
        assert said == [f"# Up to date?  {line or up_to_date}"]


def _jax_0_4_30_from_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> IndexConfig:
    """A find-links folder with jax 0.4.30, and a uv that locks exactly it."""
    from localrepos import build_wheel, sha256_file

    links = tmp_path / "links"
    wheel = build_wheel(links, "jax", "0.4.30")
    answer = [
        {"name": "jax", "version": "0.4.30", "wheels": [(wheel.as_uri(), sha256_file(wheel))]}
    ]
    _isolated_uv(tmp_path, monkeypatch, _fake_uv(tmp_path, answer))
    return IndexConfig(find_links=(str(links),), no_index=True, origin="test")


def _isolated_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uv: str) -> None:
    import gpuenv.uv.binary

    monkeypatch.setattr(gpuenv.uv.binary, "find_uv", lambda: uv)
    for name in list(os.environ):
        if name.startswith("UV_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.chdir(tmp_path)


def test_a_run_started_first_is_kept_only_for_its_own_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.lock.pipeline import LockOptions, start_pip_lock

    _isolated_uv(tmp_path, monkeypatch, _fake_uv(tmp_path, []))
    plan = jax_plan("0.4.30")
    config = IndexConfig(index_url="https://pypi.example/simple/", origin="test")
    options = LockOptions(
        output=tmp_path / "a.conda-lock.yml", indexes=config, exclude_newer="none"
    )
    guessed = PipCompile(pip_request(plan, config, None), plan)
    assert start_pip_lock(plan, options, guessed) is guessed
    other = IndexConfig(index_url="https://mirror.example/simple/", origin="test")
    guessed = PipCompile(pip_request(plan, other, None), plan)
    run = start_pip_lock(plan, options, guessed)
    assert run is not None and run is not guessed
    run.cancel()


def test_a_pylock_format_read_from_a_file_refuses_conda_packages_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The format may come from a lab's file (an equal string, not the constant itself):
    a plan with conda packages is refused all the same, before uv runs."""
    from gpuenv.lock.errors import LockError
    from gpuenv.lock.pipeline import LockOptions, lock_plan

    _isolated_uv(tmp_path, monkeypatch, _fake_uv(tmp_path, [], code=1, stderr="uv ran\n"))
    fmt = json.loads('{"format": "pylock"}')["format"]  # as a file's parser gives it
    plan = dataclasses.replace(
        jax_plan("0.4.30", conda=("cudatoolkit=11.2",)), platform="linux-64", python="3.12"
    )
    options = LockOptions(output=tmp_path / "pylock.toml", format=fmt, exclude_newer="none")
    with pytest.raises(LockError, match="holds pip packages only"):
        lock_plan(plan, options)
    pip_only = jax_plan("0.4.30")
    portable = dataclasses.replace(options, portable=True)
    with pytest.raises(LockError, match=r"--portable cannot be written as pylock\.toml"):
        lock_plan(pip_only, portable)


def test_a_portable_lock_s_header_says_its_pip_entries_are_portable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.lock.pipeline import LockOptions, lock_plan
    from localrepos import build_wheel, serve_directory, sha256_file

    served = tmp_path / "served"
    wheel = build_wheel(served / "files", "jax", "0.4.30")
    with serve_directory(served) as base:
        url = f"{base}files/{wheel.name}"
        uv = _fake_uv(
            tmp_path, [{"name": "jax", "version": "0.4.30", "wheels": [(url, sha256_file(wheel))]}]
        )
        _isolated_uv(tmp_path, monkeypatch, uv)
        config = IndexConfig(index_url=f"{base}simple/", origin="test")
        for portable in (True, False):
            out = tmp_path / f"{portable}.conda-lock.yml"
            options = LockOptions(
                output=out, indexes=config, exclude_newer="none", portable=portable
            )
            lock_plan(jax_plan("0.4.30"), options)
            text = out.read_text(encoding="utf-8")
            assert ("Its pip entries are portable (index:///PROJECT/FILE" in text) is portable
            assert ("This file holds pip packages only" in text) is not portable
            assert ("url: index:///jax/" in text) is portable


def test_a_stale_lock_names_companion_pins_that_changed_either_way() -> None:
    old = dataclasses.replace(jax_plan("0.4.30"), companions=("numpy==2.0.0",), constraints=())
    for new in (("numpy==1.26.4",), ("numpy==2.1.0",), ()):
        changed = dataclasses.replace(old, companions=new)
        assert plan_changes(old, changed) == ["companion pins changed"]
        assert plan_changes(changed, old) == ["companion pins changed"]
    capped = dataclasses.replace(old, constraints=("nvidia-cudnn-cu12<9",))
    assert plan_changes(old, capped) == ["companion pins changed"]
    assert plan_changes(old, old) == []


def test_a_pylock_records_the_fallback_it_was_locked_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuenv.lock.pipeline import LockOptions, lock_plan

    config = _jax_0_4_30_from_links(tmp_path, monkeypatch)
    plan = jax_plan("0.4.30")
    ideal = dataclasses.replace(plan, python="3.99")
    options = LockOptions(
        output=tmp_path / "pylock.toml", indexes=config, exclude_newer="none", format="pylock"
    )
    lock_plan(plan, options, ideal=ideal)
    text = (tmp_path / "pylock.toml").read_text(encoding="utf-8")
    assert f'fallback = "Python 3.99 -> {plan.python}"' in text
    lock_plan(plan, options)
    assert "fallback =" not in (tmp_path / "pylock.toml").read_text(encoding="utf-8")


def test_a_pylock_wheel_carries_the_size_uv_gave_for_that_very_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv lists another wheel of the package first (another platform's): the lock keeps its
    own wheel, and that wheel's size, not the first one's."""
    from gpuenv.lock.pipeline import LockOptions, lock_plan
    from localrepos import build_wheel, sha256_file

    links = tmp_path / "links"
    wheel = build_wheel(links, "jax", "0.4.30")
    other = "https://files.example/jax-0.4.30-py3-none-zzz_other.whl"
    size = wheel.stat().st_size
    answer = [
        {
            "name": "jax",
            "version": "0.4.30",
            "wheels": [(other, SHA["b"], 999_999), (wheel.as_uri(), sha256_file(wheel), size)],
        }
    ]
    _isolated_uv(tmp_path, monkeypatch, _fake_uv(tmp_path, answer))
    config = IndexConfig(find_links=(str(links),), no_index=True, origin="test")
    options = LockOptions(
        output=tmp_path / "pylock.toml", indexes=config, exclude_newer="none", format="pylock"
    )
    lock_plan(jax_plan("0.4.30"), options)
    text = (tmp_path / "pylock.toml").read_text(encoding="utf-8")
    assert f"size = {size}" in text and "999999" not in text and "zzz_other" not in text
