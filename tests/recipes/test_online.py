"""`gpuenv recipes check --online`: the knowledge base against what the default index publishes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuenv.recipes.online import compare, compare_variants, fetch_filenames, wheel_pythons
from localrepos import build_simple_index, build_wheel


def test_python_lists_come_from_wheel_tags() -> None:
    found = wheel_pythons(
        [
            "torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
            "torch-2.7.1-cp313-cp313t-manylinux_2_28_x86_64.whl",  # free-threaded: left out
            "torch-2.7.1-cp311-none-macosx_11_0_arm64.whl",
            "torch-2.7.1-cp311-cp311-win_amd64.whl",
            "torch-2.7.1.tar.gz",
        ]
    )
    (version,) = found
    assert found[version] == {"linux-64": {"3.11"}, "osx-arm64": {"3.11"}, "win-64": {"3.11"}}


def test_a_wrong_python_list_is_an_error(kb) -> None:
    release = kb.framework("torch").releases[-1]  # 1.13.0
    wheels = [f"torch-{release.version}-cp37-cp37m-manylinux1_x86_64.whl"]

    def fetch(index: str, project: str) -> list[str]:
        return wheels if project == "torch" else []

    findings = [
        f
        for f in compare(kb, "file:///unused/", fetch)
        if "torch" in f.where or "pytorch" in f.where
    ]
    assert any(
        f.level == "error" and "python.linux-64" in f.where and release.version in f.where
        for f in findings
    )


@pytest.mark.network
def test_the_knowledge_base_agrees_with_the_index(gpuenv_cli) -> None:
    result = gpuenv_cli(
        "recipes", "check", "--online", env={"PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": ""}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors" in result.stdout


# --- releases the knowledge base lacks, and builds per variant -------------------------------


PT_INDEX = "https://download.pytorch.org/whl/cu126"


def test_a_newer_release_on_the_index_is_an_error(kb) -> None:
    newest = kb.framework("torch").releases[0].version
    major, minor = (int(p) for p in newest.split(".")[:2])
    unknown = f"{major}.{minor + 1}.0"

    def fetch(index: str, project: str) -> list[str]:
        if project != "torch":
            return []
        return [
            f"torch-{unknown}-cp312-cp312-manylinux_2_28_x86_64.whl",
            f"torch-{major}.{minor + 2}.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl",
        ]

    findings = compare(kb, "file:///unused/", fetch)
    news = [f for f in findings if unknown in f.message]
    assert len(news) == 1 and news[0].level == "error" and "recipes draft" in news[0].message
    assert not any("rc1" in f.message for f in findings)  # pre-releases are not news


def _framework(kb, complete: bool):  # type: ignore[no-untyped-def]
    """A one-release torch: cu126 builds recorded for linux-64 only, on the cu126 index."""
    torch = kb.framework("torch")
    release = next(r for r in torch.releases if any(b.index for b in r.builds))
    template = next(b for b in release.builds if b.index)
    build = dataclasses.replace(
        template,
        variant="cu126",
        local="+cu126",
        index=PT_INDEX,
        platforms=("linux-64",),
        pypi_default=(),
        package=None,
    )
    rel = dataclasses.replace(
        release, version="9.1.0", builds=(build,), builds_complete=complete, package=None
    )
    return dataclasses.replace(torch, releases=(rel,))


def _local_index(tmp_path: Path, tags: list[str]) -> str:
    wheels = [build_wheel(tmp_path / "w", "torch", "9.1.0+cu126", tag=t) for t in tags]
    return build_simple_index(tmp_path / "index", wheels)


def _fetch_via(local: str):  # type: ignore[no-untyped-def]
    def fetch(index: str, project: str) -> list[str]:
        return fetch_filenames(local if index == PT_INDEX else index, project)

    return fetch


def test_variant_builds_that_agree_give_no_finding(tmp_path, kb) -> None:
    local = _local_index(tmp_path, ["cp312-cp312-manylinux_2_28_x86_64"])
    assert compare_variants(_framework(kb, True), _fetch_via(local)) == []


def test_an_unrecorded_variant_build_is_an_error_unless_marked_incomplete(tmp_path, kb) -> None:
    local = _local_index(tmp_path, ["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-win_amd64"])
    (finding,) = compare_variants(_framework(kb, True), _fetch_via(local))
    assert finding.level == "error" and "win-64" in finding.message
    (soft,) = compare_variants(_framework(kb, False), _fetch_via(local))
    assert soft.level == "warning" and "builds_complete = false" in soft.message


def test_a_recorded_build_missing_from_its_index_is_an_error(tmp_path, kb) -> None:
    local = _local_index(tmp_path, ["cp312-cp312-win_amd64"])
    findings = compare_variants(_framework(kb, True), _fetch_via(local))
    missing = [f for f in findings if "linux-64" in f.message]
    assert len(missing) == 1 and missing[0].level == "error"


def test_an_unreachable_variant_index_is_a_warning_not_a_crash(kb) -> None:
    def fetch(index: str, project: str) -> list[str]:
        raise ConnectionError("no route")

    (finding,) = compare_variants(_framework(kb, True), fetch)
    assert finding.level == "warning" and "not compared" in finding.message
