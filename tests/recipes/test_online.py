"""`gpuenv recipes check --online`: the knowledge base against what the default index publishes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpuenv.index.simple import fetch_filenames
from gpuenv.index.wheel_platforms import platform_of
from gpuenv.maint.online import compare, compare_variants, wheel_pythons
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


# Real file names from the configured index (tensorflow 2.3.1 and 1.15.0, read 2026-12-01).
TF_2_3_1_MAC = [
    "tensorflow-2.3.1-cp35-cp35m-macosx_10_6_intel.whl",
    "tensorflow-2.3.1-cp36-cp36m-macosx_10_9_x86_64.whl",
    "tensorflow-2.3.1-cp37-cp37m-macosx_10_9_x86_64.whl",
    "tensorflow-2.3.1-cp38-cp38-macosx_10_14_x86_64.whl",
]
TF_1_15_0 = [
    "tensorflow-1.15.0-cp27-cp27m-macosx_10_11_x86_64.whl",
    "tensorflow-1.15.0-cp27-cp27mu-manylinux2010_x86_64.whl",
    "tensorflow-1.15.0-cp35-cp35m-macosx_10_11_x86_64.whl",
    "tensorflow-1.15.0-cp35-cp35m-manylinux2010_x86_64.whl",
    "tensorflow-1.15.0-cp35-cp35m-win_amd64.whl",
    "tensorflow-1.15.0-cp36-cp36m-macosx_10_11_x86_64.whl",
    "tensorflow-1.15.0-cp36-cp36m-manylinux2010_x86_64.whl",
    "tensorflow-1.15.0-cp37-cp37m-macosx_10_11_x86_64.whl",
    "tensorflow-1.15.0-cp37-cp37m-manylinux2010_x86_64.whl",
]


def test_an_intel_fat_mac_wheel_is_an_osx_64_wheel() -> None:
    # macosx_10_6_intel holds i386 and x86_64 code; pip installs it on an Intel Mac
    (pythons,) = wheel_pythons(TF_2_3_1_MAC).values()
    assert pythons == {"osx-64": {"3.5", "3.6", "3.7", "3.8"}}


@pytest.mark.parametrize(
    "tag",
    ["macosx_10_6_intel", "macosx_10_6_fat64", "macosx_10_6_fat3", "macosx_10_6_universal"],
)
def test_mac_tags_with_x86_64_code_count_as_osx_64(tag) -> None:  # type: ignore[no-untyped-def]
    assert platform_of(tag) == ("osx-64",)


@pytest.mark.parametrize(
    "tag",
    ["macosx_10_6_i386", "macosx_10_6_ppc", "macosx_10_6_fat32", "macosx_10_6_fat", "intel"],
)
def test_mac_tags_without_x86_64_code_count_as_no_platform(tag) -> None:  # type: ignore[no-untyped-def]
    assert platform_of(tag) == ()


def test_python_2_wheels_are_left_out() -> None:
    (pythons,) = wheel_pythons(TF_1_15_0).values()
    assert pythons == {
        "linux-64": {"3.5", "3.6", "3.7"},
        "osx-64": {"3.5", "3.6", "3.7"},
        "win-64": {"3.5"},
    }


@pytest.mark.parametrize(
    "name",
    [
        "tensorflow-1.15.0-cp27-cp27mu-manylinux2010_x86_64.whl",
        "tensorflow-1.15.0-cp2-cp2-manylinux2010_x86_64.whl",
        "tensorflow-1.15.0-cp3-cp3-manylinux2010_x86_64.whl",  # no minor version
        "tensorflow-1.15.0-py2-none-any.whl",
        "tensorflow-1.15.0-cp40-cp40-manylinux2010_x86_64.whl",
        "tensorflow-1.15.0-cp310-cp310-manylinux2010_../x86_64.whl",
    ],
)
def test_wheels_of_no_python_3_x_give_no_python(name) -> None:  # type: ignore[no-untyped-def]
    assert wheel_pythons([name]) == {}


def test_python_2_and_intel_wheels_raise_no_error_against_the_data(kb) -> None:
    # tensorflow 1.15.0's and 2.3.1's recorded Python lists match the index's Python 3 wheels
    wheels = {"1.15.0": TF_1_15_0, "2.3.1": TF_2_3_1_MAC}
    tf = kb.framework("tensorflow")
    lean = dataclasses.replace(tf, releases=tuple(r for r in tf.releases if r.version in wheels))
    small = dataclasses.replace(kb, frameworks={"tensorflow": lean})

    def fetch(index: str, project: str) -> list[str]:
        return [n for names in wheels.values() for n in names] if project == "tensorflow" else []

    errors = [f for f in compare(small, "file:///unused/", fetch) if f.level == "error"]
    assert [f for f in errors if "python.osx-64" in f.where or "python.linux-64" in f.where] == []


@pytest.mark.network
def test_the_knowledge_base_agrees_with_the_index(gpuenv_cli) -> None:
    # What the index publishes beyond the knowledge base (a release out since the last commit) is
    # the maintenance check's news, not this test's failure: only a row the index contradicts is.
    result = gpuenv_cli(
        "recipes",
        "check",
        "--online",
        "--json",
        env={"PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": ""},
    )
    findings = json.loads(result.stdout)["findings"]
    wrong = [f for f in findings if f["level"] == "error" and not f["upstream"]]
    assert wrong == [], result.stderr
    assert result.returncode == (1 if any(f["level"] == "error" for f in findings) else 0)


def test_upstream_news_is_marked_and_a_contradiction_is_not(kb) -> None:
    tf = kb.framework("tensorflow")
    lean = dataclasses.replace(tf, releases=tuple(r for r in tf.releases if r.version == "2.3.1"))
    small = dataclasses.replace(kb, frameworks={"tensorflow": lean})

    def fetch_with(names: list[str]):  # type: ignore[no-untyped-def]
        return lambda index, project: names if project == "tensorflow" else []

    newer = [*TF_2_3_1_MAC, "tensorflow-99.0.0-cp38-cp38-macosx_10_14_x86_64.whl"]
    (news,) = [
        f for f in compare(small, "file:///unused/", fetch_with(newer)) if "99.0.0" in f.message
    ]
    assert news.upstream and news.draft == ("tensorflow", "99.0.0")
    more_pythons = [*TF_2_3_1_MAC, "tensorflow-2.3.1-cp39-cp39-macosx_10_14_x86_64.whl"]
    (grown,) = [
        f for f in compare(small, "file:///unused/", fetch_with(more_pythons)) if f.level == "error"
    ]
    assert grown.upstream and "3.9" in grown.message
    fewer_pythons = TF_2_3_1_MAC[:2]
    (wrong,) = [
        f
        for f in compare(small, "file:///unused/", fetch_with(fewer_pythons))
        if f.level == "error"
    ]
    assert not wrong.upstream


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


def test_jax_builds_are_compared_by_their_labelled_jaxlib_wheels(kb) -> None:
    # jax 0.4.18's cuda12_pip extra requires jaxlib ==0.4.18+cuda12.cudnn89 (its METADATA): the
    # JAX CUDA index lists jaxlib wheels with that label, and no jax wheel with any label.
    jax = kb.framework("jax")
    one = dataclasses.replace(jax, releases=tuple(r for r in jax.releases if r.version == "0.4.18"))
    asked: list[str] = []

    def fetch(index: str, project: str) -> list[str]:
        asked.append(project)
        return [
            "jax-0.4.18-py3-none-any.whl",
            "jaxlib-0.4.18+cuda12.cudnn89-cp311-cp311-manylinux2014_x86_64.whl",
        ]

    assert compare_variants(one, fetch) == []
    assert asked and set(asked) == {"jaxlib"}

    def fetch_without(index: str, project: str) -> list[str]:
        return ["jaxlib-0.4.18-cp311-cp311-manylinux2014_x86_64.whl"]

    (finding,) = compare_variants(one, fetch_without)
    assert finding.level == "error" and "jaxlib 0.4.18+cuda12.cudnn89" in finding.message
