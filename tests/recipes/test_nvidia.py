"""nvidia.toml: NVIDIA's CUDA library wheels that share a folder across CUDA majors, what the
knowledge base answers about them (`library_of`), and how strictly the file is read and checked."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from gpuenv.recipes import KnowledgeBase, NvidiaLibrary, RecipeError, load_knowledge_base
from gpuenv.recipes.check import check
from gpuenv.recipes.parse import parse_knowledge_base

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
SHA = "0" * 64
WHEEL = f"nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl sha256={SHA}"
ROW = f"""
[[library]]
name = "cudnn"
packages = ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12"]
folder = "nvidia/cudnn"
source = "{WHEEL}"
note = "measured"
"""


def _parse(text: str) -> KnowledgeBase:
    return parse_knowledge_base(Path("recipes"), {"nvidia.toml": text.encode()}, "digest")


def _errors(kb: KnowledgeBase) -> list[str]:
    return [f"{f.where}: {f.message}" for f in check(kb) if f.level == "error"]


def _with(kb: KnowledgeBase, *rows: NvidiaLibrary) -> KnowledgeBase:
    return dataclasses.replace(kb, nvidia_libraries=(*kb.nvidia_libraries, *rows))


def _row(name: str, *packages: str, source: str = "") -> NvidiaLibrary:
    wheel = f"{packages[0].replace('-', '_')}-1.0-py3-none-manylinux2014_x86_64.whl sha256={SHA}"
    return NvidiaLibrary(name, tuple(packages), f"nvidia/{name}", source or wheel)


# --- the shipped rows -------------------------------------------------------------------------


def test_each_package_names_its_library_by_its_normalised_name(kb: KnowledgeBase) -> None:
    assert kb.library_of("nvidia-cudnn-cu12") == "cudnn"
    assert kb.library_of("nvidia_cuDNN.cu13") == "cudnn"
    assert kb.library_of("NVIDIA-CUDNN-CU11") == "cudnn"
    assert kb.library_of("nvidia-nccl-cu13") == kb.library_of("nvidia-nccl-cu12") == "nccl"
    assert kb.library_of("torch") is None
    assert kb.library_of("nvidia-ml-py") is None


def test_cuda_13s_unsuffixed_wheels_are_not_in_the_cu12_rows(kb: KnowledgeBase) -> None:
    """nvidia-cublas (CUDA 13) writes nvidia/cu13/, nvidia-cublas-cu12 nvidia/cublas/: measured
    apart, so both may be in one environment."""
    for lib in ("cublas", "cuda-runtime", "cuda-nvrtc", "cufft", "cusolver", "nvjitlink"):
        assert kb.library_of(f"nvidia-{lib}") == f"{lib}-cuda13"
        assert kb.library_of(f"nvidia-{lib}-cu12") == lib
    rows = {row.name: row for row in kb.nvidia_libraries}
    assert rows["cublas-cuda13"].folder == "nvidia/cu13"
    assert rows["cublas"].packages == ("nvidia-cublas-cu11", "nvidia-cublas-cu12")
    assert rows["cudnn"].packages == ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
    assert rows["cudnn"].folder == "nvidia/cudnn"


def test_every_shipped_row_names_the_wheels_it_was_measured_on(kb: KnowledgeBase) -> None:
    assert len(kb.nvidia_libraries) >= 16
    for row in kb.nvidia_libraries:
        assert row.verified and row.note
        assert all(
            entry.strip().endswith(tuple("0123456789abcdef")) for entry in row.source.split(";")
        )
    assert _errors(kb) == []


def test_every_nvidia_pin_in_a_framework_row_is_measured(kb: KnowledgeBase) -> None:
    pinned = {
        lib.split("=")[0].split("<")[0].split(">")[0].split("~")[0].strip()
        for fw in kb.frameworks.values()
        for rel in fw.releases
        for build in rel.builds
        for lib in build.pip_libs
    }
    assert {"nvidia-cudnn-cu12", "nvidia-cublas", "nvidia-nvvm"} <= pinned
    assert [p for p in sorted(pinned) if p.startswith("nvidia-") and not kb.library_of(p)] == []


def test_the_loader_reads_the_file_with_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root)
    load_knowledge_base.cache_clear()
    try:
        assert load_knowledge_base(root).library_of("nvidia-nccl-cu12") == "nccl"
        (root / "nvidia.toml").unlink()
        load_knowledge_base.cache_clear()
        without = load_knowledge_base(root)
        assert without.nvidia_libraries == () and without.library_of("nvidia-nccl-cu12") is None
    finally:
        load_knowledge_base.cache_clear()


# --- parsing: the happy row and hostile ones ----------------------------------------------------


def test_a_row_is_read_into_a_typed_record() -> None:
    (row,) = _parse("schema = 1\n" + ROW).nvidia_libraries
    assert row == NvidiaLibrary(
        name="cudnn",
        packages=("nvidia-cudnn-cu11", "nvidia-cudnn-cu12"),
        folder="nvidia/cudnn",
        source=WHEEL,
        note="measured",
        verified=True,
    )
    assert _parse("schema = 1\n").nvidia_libraries == ()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("packages = [", "pakages = ["), "unknown key"),
        (('note = "measured"', 'note = "measured"\nfolders = ["x"]'), "unknown key"),
        (
            (
                'packages = ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12"]',
                'packages = "nvidia-cudnn-cu12"',
            ),
            "non-empty list",
        ),
        (
            ('packages = ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12"]', "packages = []"),
            "non-empty list",
        ),
        (('"nvidia-cudnn-cu11", ', '"nvidia-cudnn-cu11", 12, '), "not a canonical"),
        (('"nvidia-cudnn-cu11"', '"nvidia_cudnn_cu11"'), "not a canonical"),
        (('"nvidia-cudnn-cu11"', '"Nvidia-cuDNN-cu11"'), "not a canonical"),
        (('"nvidia-cudnn-cu11"', '"nvidia-cudnn-cu12"'), "names a package twice"),
        (('name = "cudnn"', "name = 3"), "'name' must be a non-empty string"),
        (('name = "cudnn"', 'name = ""'), "'name' must be a non-empty string"),
        (('name = "cudnn"\n', ""), "missing required field 'name'"),
        (('folder = "nvidia/cudnn"', "folder = ['nvidia/cudnn']"), "'folder' must be"),
        (('folder = "nvidia/cudnn"', 'folder = "/usr/lib"'), "not a relative path"),
        (('folder = "nvidia/cudnn"', 'folder = "nvidia/../.."'), "not a relative path"),
        ((f'source = "{WHEEL}"', "source = 1"), "'source' must be a non-empty string"),
        ((f'source = "{WHEEL}"', 'source = " "'), "'source' must be a non-empty string"),
        ((f'source = "{WHEEL}"\n', ""), "missing required field 'source'"),
        (('note = "measured"', "note = 1"), "'note' must be a string"),
        (('note = "measured"', 'note = "m"\nverified = "yes"'), "'verified' must be true or false"),
    ],
)
def test_a_malformed_row_is_refused_naming_it(edit: tuple[str, str], message: str) -> None:
    assert edit[0] in ROW
    with pytest.raises(RecipeError, match=message) as caught:
        _parse("schema = 1\n" + ROW.replace(*edit, 1))
    assert "nvidia.toml [[library]] #1" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ROW, "schema = None"),
        ("schema = 2\n" + ROW, "schema = 2"),
        ('schema = "1"\n' + ROW, "schema = '1'"),
        ("schema = 1\nlibraries = []\n" + ROW, "unknown top-level key"),
        ("schema = 1\nlibrary = 3\n", "array of"),
        ("schema = 1\nlibrary = [1, 2]\n", "array of"),
    ],
)
def test_a_malformed_file_is_refused(text: str, message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        _parse(text)


# --- `recipes check` ----------------------------------------------------------------------------


def test_a_package_in_two_libraries_is_an_error(kb: KnowledgeBase) -> None:
    errors = _errors(_with(kb, _row("cudnn-again", "nvidia-cudnn-cu12")))
    assert any("nvidia-cudnn-cu12 is also in library cudnn" in e for e in errors)


def test_two_rows_of_one_name_are_an_error(kb: KnowledgeBase) -> None:
    errors = _errors(_with(kb, _row("cudnn", "nvidia-cudnn-cu14")))
    assert any("another [[library]] row has this name" in e for e in errors)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("read the wheels", "not '<wheel> sha256=<hex>'"),
        (f"nvidia_cudnn_cu14-9.0-py3-none-any.whl sha256={'A' * 64}", "not '<wheel> sha256=<hex>'"),
        (f"not-a-wheel.whl sha256={SHA}", "is not a wheel name"),
        (
            f"nvidia_nccl_cu12-2.0-py3-none-any.whl sha256={SHA}",
            "a wheel of nvidia-nccl-cu12, not of",
        ),
        (f"nvidia_cudnn_cu14-9.0-py3-none-any.whl sha256={SHA}; ", "not '<wheel> sha256=<hex>'"),
    ],
)
def test_a_source_that_is_not_a_list_of_its_own_wheels_is_an_error(
    kb: KnowledgeBase, source: str, message: str
) -> None:
    errors = _errors(_with(kb, _row("cudnn14", "nvidia-cudnn-cu14", source=source)))
    assert any("library cudnn14" in e and message in e for e in errors), errors


def test_an_unverified_row_needs_a_note(kb: KnowledgeBase) -> None:
    row = dataclasses.replace(_row("cudnn14", "nvidia-cudnn-cu14"), verified=False)
    assert any("verified = false needs a note" in e for e in _errors(_with(kb, row)))
    assert _errors(_with(kb, dataclasses.replace(row, note="only the x86_64 wheel read"))) == []


def test_an_nvidia_pin_no_row_measured_is_a_warning(kb: KnowledgeBase) -> None:
    rows = tuple(r for r in kb.nvidia_libraries if r.name != "nvvm-cuda13")
    warnings = [
        f"{f.where}: {f.message}"
        for f in check(dataclasses.replace(kb, nvidia_libraries=rows))
        if f.level == "warning"
    ]
    assert warnings and all("nvidia-nvvm is in no nvidia.toml" in w for w in warnings)
    assert any(w.startswith("jax.toml jax ") for w in warnings)


def test_a_linux_cuda_torch_row_without_pip_libs_says_why(kb: KnowledgeBase) -> None:
    """Absent pip_libs on a Linux CUDA build is either measured (the wheel bundles its CUDA
    libraries, cited) or said to be unknown: the resolver must never read it as "needs none"."""
    silent, bundled = [], []
    for rel in kb.frameworks["torch"].releases:
        for build in rel.builds:
            if not build.is_gpu or build.pip_libs:
                continue
            if not any(p.startswith("linux") for p in build.platforms):
                continue
            note = build.provenance.note
            if "bundles its CUDA libraries" in note:
                bundled.append(f"{rel.version} {build.variant} {build.platforms[0]}")
            elif "pip_libs not recorded (unknown, not none)" not in note:
                silent.append(f"{rel.version} {build.variant} {build.platforms}")
    assert silent == []
    assert "1.13.1 cu116 linux-64" in bundled and "2.5.1 cu124 linux-aarch64" in bundled
