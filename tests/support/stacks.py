"""Local stand-ins for the indexes and channel a GPU stack comes from: a PyTorch-like index,
the user's default index and conda-forge, with tiny packages carrying real metadata."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuenv.index.config import IndexConfig
from localrepos import build_conda_channel, build_conda_package, build_simple_index, build_wheel

WIN = "cp310-cp310-win_amd64"
LINUX = "cp310-cp310-manylinux_2_28_x86_64"


@dataclass(frozen=True)
class LocalRepos:
    default_index: str  # stands in for the user's configured index
    torch_index: str  # stands in for https://download.pytorch.org/whl/cu118
    channel: str  # stands in for conda-forge
    root: Path

    @property
    def indexes(self) -> IndexConfig:
        return IndexConfig(index_url=self.default_index, origin="test")


def build_repos(root: Path) -> LocalRepos:
    wheels = root / "wheels"
    torch_wheels = [
        build_wheel(wheels, "torch", "2.7.1+cu118", tag=tag, requires=["numpy", "filelock"])
        for tag in (WIN, LINUX)
    ]
    default_wheels = [
        # the default index has the default (CUDA 12) build too: routing must not take it
        *(
            build_wheel(wheels, "torch", "2.7.1", tag=tag, requires=["numpy"])
            for tag in (WIN, LINUX)
        ),
        *(
            build_wheel(wheels, "numpy", v, tag=tag)
            for v in ("1.26.4", "2.1.0")
            for tag in (WIN, LINUX)
        ),
        build_wheel(wheels, "filelock", "3.16.1"),
        *(
            build_wheel(
                wheels,
                "tensorflow",
                "2.10.1",
                tag=tag,
                requires=["numpy>=1.20", "protobuf<3.20,>=3.9.2"],
            )
            for tag in (WIN, LINUX)
        ),
        build_wheel(wheels, "protobuf", "3.19.6"),
        build_wheel(wheels, "protobuf", "4.25.0"),
        build_wheel(wheels, "keras", "2.10.0"),
    ]
    conda_dir = root / "conda"
    packages = [
        build_conda_package(conda_dir, "python", "3.10.14", "h4de0772_0_cpython", subdir="win-64"),
        build_conda_package(
            conda_dir,
            "python",
            "3.10.14",
            "hd12c33a_0_cpython",
            subdir="linux-64",
            depends=["__glibc >=2.17"],
        ),
        build_conda_package(conda_dir, "pip", "24.0", "pyhd8ed1ab_0", depends=["python >=3.7"]),
        build_conda_package(
            conda_dir,
            "cudatoolkit",
            "11.2.2",
            "h7d7167e_13",
            subdir="win-64",
            depends=["__cuda >=11.2"],
        ),
        build_conda_package(
            conda_dir,
            "cudnn",
            "8.1.0.77",
            "h3e0f4f4_0",
            subdir="win-64",
            depends=["cudatoolkit >=11.2,<12"],
        ),
    ]
    return LocalRepos(
        default_index=build_simple_index(root / "default", default_wheels),
        torch_index=build_simple_index(root / "pytorch-cu118", torch_wheels),
        channel=build_conda_channel(root / "channel", packages),
        root=root,
    )
