"""`gpuenv recipes draft`: rows for a new release from its artifacts, on a local index.

The fake wheels have real zip structure, METADATA and the files the real ones carry
(torch/version.py; tensorflow/python/platform/build_info.py). Expected values are what those
files say, and TensorFlow's own rule for its architecture list (configure.py: "compute_XY
enables PTX embedding in addition to SASS").
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gpuenv.maint.draft import DraftError, draft
from gpuenv.recipes import RecipeError, load_knowledge_base
from localrepos import build_simple_index, build_wheel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
LINUX = "cp312-cp312-manylinux_2_28_x86_64"
WINDOWS = "cp312-cp312-win_amd64"


def _version_py(version: str, cuda: str | None) -> dict[str, str]:
    cuda_text = repr(cuda) if cuda else "None"
    return {
        "torch/version.py": f"__version__ = {version!r}\ngit_version = 'abc'\ncuda = {cuda_text}\n"
    }


@pytest.fixture
def torch_indexes(tmp_path: Path) -> tuple[str, str]:
    cudnn = "nvidia-cudnn-cu12==9.10.2.21; platform_system == 'Linux'"
    default = [
        build_wheel(
            tmp_path / "d",
            "torch",
            "2.16.0",
            tag=LINUX,
            requires=[
                cudnn,
                "nvidia-cublas-cu12==12.8.4.1; platform_system == 'Linux'",
                "filelock",
            ],
            files=_version_py("2.16.0", "12.8"),
        ),
        build_wheel(
            tmp_path / "d", "torch", "2.16.0", tag=WINDOWS, files=_version_py("2.16.0", None)
        ),
        build_wheel(
            tmp_path / "d", "torch", "2.15.0", tag=LINUX, files=_version_py("2.15.0", "12.8")
        ),
    ]
    variant = [
        build_wheel(
            tmp_path / "v",
            "torch",
            "2.16.0+cu126",
            tag=tag,
            requires=["nvidia-cudnn-cu12==9.5.1.17; platform_system == 'Linux'"],
            files=_version_py("2.16.0+cu126", "12.6"),
        )
        for tag in (LINUX, WINDOWS)
    ]
    return (
        build_simple_index(tmp_path / "default", default),
        build_simple_index(tmp_path / "cu126", variant),
    )


def test_torch_rows_come_from_the_wheels(kb, torch_indexes) -> None:
    default, variant = torch_indexes
    text = draft(kb, "torch", "2.16.0", default, extra_indexes=[variant], variant_indexes=[])
    doc = tomllib.loads(text)
    (release,) = doc["release"]
    assert release["version"] == "2.16.0" and release["verified"] is False
    assert release["python"] == {"linux-64": ["3.12"], "win-64": ["3.12"]}
    builds = {(b["variant"], tuple(b["platforms"])): b for b in release["build"]}
    linux = builds[("cu128", ("linux-64",))]
    assert linux["cuda"] == "12.8" and linux["cudnn"] == "9.10.2.21"
    assert linux["pypi_default"] == ["linux-64"]
    assert any(p.startswith("nvidia-cublas-cu12==12.8.4.1") for p in linux["pip_libs"])
    assert "filelock" not in " ".join(linux["pip_libs"])
    assert "torch/version.py in torch-2.16.0-cp312" in linux["source"]
    assert "METADATA of torch-2.16.0-cp312" in linux["source"]
    assert linux["archs"] == "TODO"  # not in the wheel's text files: a maintainer fills it in
    cpu = builds[("cpu", ("win-64",))]
    assert "cuda" not in cpu
    cu126 = builds[("cu126", ("linux-64", "win-64"))]
    assert cu126["cuda"] == "12.6" and cu126["cudnn"] == "9.5.1.17"
    assert cu126["index"] == variant and cu126["local"] == "+cu126"


def test_metadata_is_read_from_the_wheel_without_a_pep658_file(kb, torch_indexes) -> None:
    default, _ = torch_indexes
    root = Path(default.removeprefix("file://")).parent
    for meta in (root / "files").glob("*.metadata"):
        meta.unlink()
    doc = tomllib.loads(draft(kb, "torch", "2.16.0", default, variant_indexes=[]))
    linux = next(b for b in doc["release"][0]["build"] if b["variant"] == "cu128")
    assert linux["cudnn"] == "9.10.2.21"


def test_a_draft_is_refused_by_the_loader_until_reviewed(
    tmp_path, monkeypatch, kb, torch_indexes
) -> None:
    default, _ = torch_indexes
    text = draft(kb, "torch", "2.16.0", default, variant_indexes=[])
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root)
    with (root / "pytorch.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n" + text)
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(RecipeError, match="TODO"):
        load_knowledge_base(root)


def test_tensorflow_archs_come_from_build_info(tmp_path, kb) -> None:
    build_info = (
        "import collections\n"
        "build_info = collections.OrderedDict([('x', 1)]) if False else {\n"
        "    'cuda_version': '12.5.1', 'cudnn_version': '9',\n"
        "    'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90'],\n"
        "    'is_cuda_build': True}\n"
    )
    plain = "build_info = {'cuda_version': '12.5.1', 'cudnn_version': '9', 'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']}\n"
    wheel = build_wheel(
        tmp_path / "w",
        "tensorflow",
        "2.22.0",
        tag=LINUX,
        files={"tensorflow/python/platform/build_info.py": plain},
        extras={"and-cuda": ["nvidia-cudnn-cu12==9.3.0.75"]},
    )
    index = build_simple_index(tmp_path / "index", [wheel])
    doc = tomllib.loads(draft(kb, "tensorflow", "2.22.0", index, variant_indexes=[]))
    (build,) = doc["release"][0]["build"]
    assert build["variant"] == "cuda" and build["cuda"] == "12.5.1"
    archset = doc["archsets"][build["archs"]]
    assert archset["sass"] == ["6.0", "7.0", "8.0", "8.9", "9.0"]
    assert archset["ptx"] == ["9.0"]
    assert "build_info.py in tensorflow-2.22.0" in archset["source"]
    # A build_info that is code, not a literal, is never run: no archs are drafted from it.
    wheel2 = build_wheel(
        tmp_path / "w2",
        "tensorflow",
        "2.23.0",
        tag=LINUX,
        files={"tensorflow/python/platform/build_info.py": build_info},
    )
    doc2 = tomllib.loads(
        draft(
            kb,
            "tensorflow",
            "2.23.0",
            build_simple_index(tmp_path / "i2", [wheel2]),
            variant_indexes=[],
        )
    )
    assert "archsets" not in doc2


@pytest.mark.parametrize("version", ["9.9.9", "2.16.0+cu126", "not-a-version"])
def test_nothing_to_draft_is_a_clear_error(kb, torch_indexes, version) -> None:
    default, _ = torch_indexes
    with pytest.raises(DraftError):
        draft(kb, "torch", version, default, variant_indexes=[])


def test_hostile_file_names_on_the_index_are_skipped(kb) -> None:
    def lister(index: str, project: str) -> dict[str, str]:
        return {
            "../torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl": "file:///etc/passwd",
            "torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl/../../x.whl": "file:///x",
        }

    with pytest.raises(DraftError):
        draft(kb, "torch", "2.16.0", "file:///unused/", lister=lister)


def test_the_cli(gpuenv_cli, torch_indexes, tmp_path) -> None:
    default, variant = torch_indexes
    env = {"UV_DEFAULT_INDEX": default, "UV_INDEX_URL": default, "PIP_INDEX_URL": default}
    result = gpuenv_cli("recipes", "draft", "torch", "2.16.0", "--index", variant, env=env)
    assert result.returncode == 0, result.stderr
    assert 'version = "2.16.0"' in result.stdout
    bad = gpuenv_cli("recipes", "draft", "torch", "2.16.0", "--index", "../x", env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    unknown = gpuenv_cli("recipes", "draft", "caffe", "1.0", env=env)
    assert unknown.returncode == 2 and "unknown framework" in unknown.stderr


def test_jax_rows_come_from_its_extras_and_plugin(tmp_path, kb) -> None:
    # jax's own wheel is pure: CUDA comes through the cuda12 extra and the plugin's
    # "with-cuda" extra, as in jax's METADATA and jax_cuda12_plugin's.
    jax = build_wheel(
        tmp_path / "w",
        "jax",
        "0.13.0",
        requires=["jaxlib<=0.13.0,>=0.13.0", "numpy>=2.0"],
        extras={
            "cuda12": ["jax-cuda12-plugin[with-cuda]<=0.13.0,>=0.13.0", "jaxlib==0.13.0"],
            "tpu": ["libtpu==0.0.30"],
        },
    )
    jaxlibs = [
        build_wheel(tmp_path / "w", "jaxlib", "0.13.0", tag=t)
        for t in (LINUX, WINDOWS, "cp313-cp313-manylinux_2_27_aarch64")
    ]
    plugin = build_wheel(
        tmp_path / "w",
        "jax-cuda12-plugin",
        "0.13.0",
        tag=LINUX,
        extras={
            "with-cuda": ["nvidia-cudnn-cu12<10.0,>=9.10.2.21", "nvidia-cublas-cu12>=12.1.3.1"]
        },
    )
    index = build_simple_index(tmp_path / "index", [jax, *jaxlibs, plugin])
    doc = tomllib.loads(draft(kb, "jax", "0.13.0", index, variant_indexes=[]))
    (release,) = doc["release"]
    assert release["jaxlib"] == "0.13.0"
    assert release["python"] == {
        "linux-64": ["3.12"],
        "linux-aarch64": ["3.13"],
        "win-64": ["3.12"],
    }
    builds = {b["variant"]: b for b in release["build"]}
    assert set(builds) == {"cpu", "cuda12"}  # tpu is no CUDA extra
    cuda = builds["cuda12"]
    assert cuda["extra"] == "cuda12" and cuda["package"] == "jax"
    assert cuda["cudnn"] == "9.10.2" and cuda["cuda"] == "TODO" and cuda["archs"] == "TODO"
    assert "nvidia-cudnn-cu12<10.0,>=9.10.2.21" in cuda["pip_libs"]
    assert "METADATA of jax_cuda12_plugin-0.13.0" in cuda["source"]


def test_cuda_13_library_pins_without_a_suffix_are_drafted() -> None:
    from gpuenv.maint.draft.collect import cuda_pins

    metadata = (
        b"Metadata-Version: 2.1\nName: jax-cuda13-plugin\n"
        b'Requires-Dist: nvidia-cublas>=13.0.0.19; sys_platform == "linux" and extra == "with-cuda"\n'
        b"Requires-Dist: nvidia-cudnn-cu13==9.12.0.46\n"
        b"Requires-Dist: jax-cuda13-pjrt==0.12.1\n"
        b"Requires-Dist: numpy>=2\n"
    )
    libs, cudnn = cuda_pins(metadata)
    assert [lib.split(";")[0].split(">")[0].split("=")[0] for lib in libs] == [
        "nvidia-cublas",
        "nvidia-cudnn-cu13",
    ]
    assert cudnn == "9.12.0.46"
