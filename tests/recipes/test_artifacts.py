"""Reading a wheel's CUDA libraries' architectures from an index: only the libraries are
fetched, they are streamed, and a wheel that is not what it says is refused clearly."""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from fatbins import ELF, PTX, container, entry, library, nvcc_library, serve_ranges, write_wheel
from gpuenv.cli import cli
from gpuenv.index.remote_wheel import WheelReadError
from gpuenv.maint.artifacts import LibraryArchs, build_lists, libraries, union, wheel_archs
from localrepos import build_simple_index, serve_directory

LIB = library(
    container(entry(ELF, 35, os.urandom(4000)), entry(PTX, 35, b"p" * 50)),
    container(entry(ELF, 70, os.urandom(4000)), entry(PTX, 70, b"p" * 50)),
)


def _wheel(tmp: Path, name: str = "tensorflow-2.3.4-cp38-cp38-manylinux2010_x86_64.whl") -> Path:
    return write_wheel(
        tmp / name,
        {
            "tensorflow/__init__.py": b"",
            "tensorflow/python/_pywrap_tensorflow_internal.so": LIB,
            "tensorflow/libtensorflow_framework.so.2": b"\x7fELF" + os.urandom(2000),
            "tensorflow/big_data.bin": os.urandom(4 * 1024 * 1024),  # not a library
            "tensorflow-2.3.4.dist-info/METADATA": b"Name: tensorflow\nVersion: 2.3.4\n",
        },
    )


def test_only_the_libraries_are_fetched_over_http(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    sent: list[int] = []
    with serve_ranges(tmp_path, sent) as base:
        found = wheel_archs(base + wheel.name)
    assert [(lib.member, lib.sass, lib.ptx) for lib in found] == [
        ("tensorflow/python/_pywrap_tensorflow_internal.so", ("3.5", "7.0"), ("3.5", "7.0"))
    ]
    assert sum(sent) < 100_000 < wheel.stat().st_size  # the 4 MB data file never came


def test_bundled_nvidia_libraries_are_listed_but_not_the_builds_archs(tmp_path: Path) -> None:
    cudnn = library(container(entry(ELF, 90, b"c"), entry(PTX, 90, b"c")))
    wheel = write_wheel(
        tmp_path / "torch-1.13.1-cp310-cp310-manylinux1_x86_64.whl",
        {"torch/lib/libtorch_cuda.so": LIB, "torch/lib/libcudnn_ops_infer.so.8": cudnn},
    )
    found = wheel_archs(wheel.as_uri())
    assert [(lib.member, lib.vendored) for lib in found] == [
        ("torch/lib/libtorch_cuda.so", False),
        ("torch/lib/libcudnn_ops_infer.so.8", True),
    ]
    assert union(found) == (["3.5", "7.0"], ["3.5", "7.0"])


def test_the_build_lists_are_what_a_tenth_of_the_fatbins_carry(tmp_path: Path) -> None:
    # like torch's libtorch_cuda.so: its arch list in every fatbin, and sm_89 in a few FP8
    # kernels only; and like TensorFlow 2.8: sm_80 SASS in a fifth of the fatbins
    common = [entry(ELF, 70, b"k"), entry(PTX, 80, b"p")]
    lib = library(
        *[container(*common) for _ in range(16)],
        *[container(*common, entry(ELF, 80, b"k")) for _ in range(4)],
        container(entry(ELF, 70, b"k"), entry(ELF, 89, b"k")),
    )
    side = library(container(entry(ELF, 50, b"k")))  # like libtorch_cuda_linalg.so's sm_50
    wheel = write_wheel(
        tmp_path / "t-1.0-cp310-cp310-linux_x86_64.whl",
        {"t/libt.so": lib, "t/libt_linalg.so": side},
    )
    found = wheel_archs(wheel.as_uri())
    assert build_lists(found) == (["7.0", "8.0"], ["8.0"])
    assert union(found) == (["5.0", "7.0", "8.0", "8.9"], ["8.0"])
    assert [LibraryArchs.from_json(lib.to_json()) for lib in found] == found


def test_a_server_that_ignores_ranges_still_gives_the_right_answer(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    with serve_directory(tmp_path) as base:
        found = wheel_archs(base + wheel.name)
    assert [lib.ptx for lib in found] == [("3.5", "7.0")]


def test_a_real_nvcc_library_in_a_wheel(tmp_path: Path) -> None:
    data = nvcc_library(tmp_path, ["arch=compute_80,code=[sm_80,compute_80]"])
    if data is None:
        pytest.skip("nvcc is not installed")
    wheel = write_wheel(tmp_path / "k-1.0-cp310-cp310-linux_x86_64.whl", {"k/libk.so": data})
    found = wheel_archs(wheel.as_uri())
    assert [(lib.sass, lib.ptx) for lib in found] == [(("8.0",), ("8.0",))]


def test_a_member_named_outside_the_wheel_is_refused(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"../x.so": LIB})
    with pytest.raises(WheelReadError, match="not a relative path"):
        libraries(wheel.as_uri())


def _patch(wheel: Path, member: str, field: int, value: int) -> None:
    """Rewrite a u32 field of the member's central directory entry (20: compressed size,
    24: uncompressed size)."""
    data = bytearray(wheel.read_bytes())
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        (name_len,) = struct.unpack_from("<H", data, at + 28)
        if data[at + 46 : at + 46 + name_len] == member.encode():
            struct.pack_into("<I", data, at + field, value)
        at = data.find(b"PK\x01\x02", at + 4)
    wheel.write_bytes(bytes(data))


def test_a_library_larger_than_declared_is_refused(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"x/lib.so": LIB})
    _patch(wheel, "x/lib.so", 24, 1000)
    with pytest.raises(WheelReadError, match="inflates beyond its declared 1000 bytes"):
        wheel_archs(wheel.as_uri())


def test_a_library_smaller_than_declared_is_truncated(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"x/lib.so": LIB})
    _patch(wheel, "x/lib.so", 24, 0xFFFFFFF0)  # a huge claim: read as a stream, then refused
    with pytest.raises(WheelReadError, match="truncated"):
        wheel_archs(wheel.as_uri())


def test_compressed_data_cut_short_is_truncated(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"x/lib.so": LIB})
    with zipfile.ZipFile(wheel) as zf:
        compressed = zf.getinfo("x/lib.so").compress_size
    _patch(wheel, "x/lib.so", 20, compressed // 2)
    with pytest.raises(WheelReadError, match="truncated"):
        wheel_archs(wheel.as_uri())


def test_cli_prints_per_library_and_flags_a_row_the_wheel_contradicts(tmp_path: Path) -> None:
    # the knowledge base's TensorFlow 2.3.4 row; this wheel carries PTX for 3.5 as well as 7.0
    index = build_simple_index(tmp_path / "index", [_wheel(tmp_path)])
    result = CliRunner().invoke(
        cli,
        [
            "recipes",
            "verify",
            "--artifacts",
            "--framework",
            "tensorflow",
            "--release",
            "2.3.4",
            "--index",
            index,
        ],
    )
    assert result.exit_code == 1, result.output
    assert (
        "tensorflow/python/_pywrap_tensorflow_internal.so: sass 3.5, 7.0; ptx 3.5, 7.0"
        in result.output
    )
    assert "ptx in the wheel, not in the row: ['3.5']" in result.output
    assert "in every fatbin: sass -; ptx -" in result.output  # 3.5 in one, 7.0 in the other
    result = CliRunner().invoke(
        cli,
        [
            "recipes",
            "verify",
            "--artifacts",
            "--framework",
            "tensorflow",
            "--release",
            "2.3.4",
            "--index",
            index,
            "--json",
        ],
    )
    doc = json.loads(result.output)
    (reading,) = doc["readings"]
    assert reading["wheel"] == "tensorflow-2.3.4-cp38-cp38-manylinux2010_x86_64.whl"
    assert len(reading["sha256"]) == 64
    assert reading["ptx"] == ["3.5", "7.0"]


@pytest.mark.parametrize(
    "args",
    [
        ["--framework", "nope"],
        ["--release", "2.3.4"],
        ["--framework", "tensorflow", "--index", "ftp://x"],
    ],
)
def test_cli_bad_input_is_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["recipes", "verify", "--artifacts", *args])
    assert result.exit_code == 2, result.output


def test_check_artifacts_needs_online() -> None:
    result = CliRunner().invoke(cli, ["recipes", "check", "--artifacts"])
    assert result.exit_code == 2
    assert "--online" in result.output
