"""The local repository builders in tests/localrepos.py, checked against the real tools.

Wheels must install with uv, the PEP 503 index must resolve with ``uv pip
compile`` (platform-specific and local versions included), and the conda
channel must solve and install with py-rattler.  Everything is offline.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# --import-mode=importlib does not put tests/ on sys.path; localrepos lives in tests/support.
_SUPPORT = str(Path(__file__).resolve().parent / "support")
if _SUPPORT not in sys.path:
    sys.path.insert(0, _SUPPORT)

from localrepos import (  # noqa: E402
    build_conda_channel,
    build_conda_package,
    build_simple_index,
    build_wheel,
    find_uv,
    rattler_install,
    rattler_solve,
    serve_directory,
    sha256_file,
    uv_environment,
)

UV = find_uv()
needs_uv = pytest.mark.skipif(UV is None, reason="uv is not installed")

# Naming an interpreter stops uv searching the machine for a Python 3.10 (~1 s a call).
_HOST = ["--python", sys.executable]
WINDOWS_310 = [*_HOST, "--python-platform", "x86_64-pc-windows-msvc", "--python-version", "3.10"]
LINUX_311 = [*_HOST, "--python-platform", "x86_64-manylinux_2_28", "--python-version", "3.11"]

UvRunner = Callable[..., "subprocess.CompletedProcess[str]"]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def uv(tmp_path_factory: pytest.TempPathFactory) -> UvRunner:
    """Run uv offline-capable, with a private cache and no inherited config."""
    assert UV is not None
    env = uv_environment(tmp_path_factory.mktemp("uv-cache"))

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [UV, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
        )

    return run


@pytest.fixture(scope="module")
def pyindex(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A small index shaped like the PyTorch one: local versions, per-platform wheels."""
    wheels = tmp_path_factory.mktemp("wheels")
    built = [
        build_wheel(
            wheels,
            "torch",
            "2.7.1+cu118",
            tag="cp310-cp310-win_amd64",
            requires=["filelock", "typing-extensions>=4.10.0"],
            requires_python=">=3.9",
        ),
        build_wheel(
            wheels,
            "torch",
            "2.7.1+cu118",
            tag="cp311-cp311-manylinux_2_28_x86_64",
            requires=["filelock", "typing-extensions>=4.10.0"],
            requires_python=">=3.9",
        ),
        # A plain 2.7.1 for Linux only, and a cu126 build with no cp310 wheel.
        build_wheel(wheels, "torch", "2.7.1", tag="cp311-cp311-manylinux_2_28_x86_64"),
        build_wheel(wheels, "torch", "2.7.1+cu126", tag="cp311-cp311-win_amd64"),
        build_wheel(wheels, "filelock", "3.16.1", requires_python=">=3.8"),
        build_wheel(wheels, "typing_extensions", "4.12.2", requires_python=">=3.8"),
        build_wheel(wheels, "typing_extensions", "4.99.0", requires_python=">=3.12"),
    ]
    root = tmp_path_factory.mktemp("pyindex")
    return root, build_simple_index(root, built)


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A conda channel with CUDA stand-ins for win-64 and linux-64."""
    pkgs = tmp_path_factory.mktemp("conda-pkgs")
    built = [
        build_conda_package(
            pkgs,
            "cudatoolkit",
            "11.2.2",
            "h933977f_10",
            subdir="win-64",
            depends=["__cuda >=11.2"],
            files={"Library/bin/cudart64_110.dll": "not really a dll\n"},
        ),
        build_conda_package(
            pkgs,
            "cudnn",
            "8.1.0.77",
            "h3e0f4f4_0",
            subdir="win-64",
            depends=["cudatoolkit 11.2.*"],
            files={"Library/bin/cudnn64_8.dll": "not really a dll\n"},
        ),
        build_conda_package(
            pkgs,
            "cudatoolkit",
            "11.2.2",
            "hbe64b41_10",
            subdir="linux-64",
            depends=["__cuda >=11.2", "__glibc >=2.17,<3.0.a0"],
            files={"lib/libcudart.so.11.0": "not really a library\n"},
        ),
        build_conda_package(
            pkgs,
            "cudnn",
            "8.1.0.77",
            "h90431f1_0",
            subdir="linux-64",
            depends=["cudatoolkit 11.2.*", "__glibc >=2.17"],
        ),
        build_conda_package(pkgs, "cuda-version", "11.2", "hb11dac2_3"),
    ]
    return build_conda_channel(tmp_path_factory.mktemp("channel"), built)


# --------------------------------------------------------------------------- wheels


def test_wheel_layout_metadata_and_record(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path,
        "nvidia-cudnn-cu11",
        "8.9.7.29",
        tag="py3-none-manylinux1_x86_64",
        requires=["nvidia-cublas-cu11", "numpy>=1.22; python_version >= '3.10'"],
        requires_python=">=3.8",
        extras={"dev": ["pytest>=8", "mypy; python_version < '4'"]},
    )
    assert wheel.name == "nvidia_cudnn_cu11-8.9.7.29-py3-none-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "nvidia_cudnn_cu11/__init__.py" in names
        dist_info = "nvidia_cudnn_cu11-8.9.7.29.dist-info"
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        wheel_meta = zf.read(f"{dist_info}/WHEEL").decode()
        record = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        for path, digest, size in record:
            if path.endswith("RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode()
            assert int(size) == len(data)
        assert {row[0] for row in record} == set(names)
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in zf.infolist())

    assert "Metadata-Version: 2.1\nName: nvidia-cudnn-cu11\nVersion: 8.9.7.29\n" in metadata
    assert "Requires-Python: >=3.8" in metadata
    assert "Requires-Dist: nvidia-cublas-cu11\n" in metadata
    assert "Requires-Dist: numpy>=1.22; python_version >= '3.10'\n" in metadata
    assert "Provides-Extra: dev\n" in metadata
    assert 'Requires-Dist: pytest>=8; extra == "dev"\n' in metadata
    assert "Requires-Dist: mypy; (python_version < '4') and extra == \"dev\"\n" in metadata
    assert "Tag: py3-none-manylinux1_x86_64\n" in wheel_meta
    assert "Root-Is-Purelib: false" in wheel_meta


def test_wheel_tags_local_versions_and_determinism(tmp_path: Path) -> None:
    a = build_wheel(tmp_path / "a", "torch", "2.7.1+cu118", tag="cp310-cp310-win_amd64")
    b = build_wheel(tmp_path / "b", "torch", "2.7.1+cu118", tag="cp310-cp310-win_amd64")
    assert a.name == "torch-2.7.1+cu118-cp310-cp310-win_amd64.whl"
    assert a.read_bytes() == b.read_bytes()

    multi = build_wheel(tmp_path, "six", "1.17.0", tag="py2.py3-none-any")
    with zipfile.ZipFile(multi) as zf:
        wheel_meta = zf.read("six-1.17.0.dist-info/WHEEL").decode()
    assert "Tag: py2-none-any\nTag: py3-none-any\n" in wheel_meta
    assert "Root-Is-Purelib: true" in wheel_meta

    custom = build_wheel(tmp_path, "pkg", "1.0", files={"pkg_data/x.txt": "hi\n"})
    with zipfile.ZipFile(custom) as zf:
        assert "pkg_data/x.txt" in zf.namelist()
        assert "pkg/__init__.py" not in zf.namelist()


@needs_uv
def test_wheel_installs_into_fresh_venv(tmp_path: Path, uv: UvRunner) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "gpuenv-probe", "1.2.3", requires=["gpuenv-probe-dep>=2"])
    build_wheel(wheels, "gpuenv_probe_dep", "2.0+local.1")
    venv = tmp_path / "venv"
    made = uv("venv", "--offline", "--python", sys.executable, str(venv))
    assert made.returncode == 0, made.stderr
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    installed = uv(
        "pip",
        "install",
        "--offline",
        "--no-index",
        "--find-links",
        str(wheels),
        "--python",
        str(python),
        "gpuenv-probe",
    )
    assert installed.returncode == 0, installed.stderr
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import gpuenv_probe, gpuenv_probe_dep; "
            "print(gpuenv_probe.__version__, gpuenv_probe_dep.__version__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["1.2.3", "2.0+local.1"]


# --------------------------------------------------------------------------- PEP 503 index


def test_simple_index_layout(pyindex: tuple[Path, str]) -> None:
    root, url = pyindex
    assert url == (root / "simple").resolve().as_uri() + "/"
    page = (root / "simple" / "typing-extensions" / "index.html").read_text()
    wheel = root / "files" / "typing_extensions-4.99.0-py3-none-any.whl"
    assert f'href="../../files/{wheel.name}#sha256={sha256_file(wheel)}"' in page
    assert 'data-requires-python="&gt;=3.12"' in page
    torch_page = (root / "simple" / "torch" / "index.html").read_text()
    assert "torch-2.7.1%2Bcu118-cp310-cp310-win_amd64.whl#sha256=" in torch_page
    assert (root / "files" / "torch-2.7.1+cu118-cp310-cp310-win_amd64.whl.metadata").is_file()
    listing = (root / "simple" / "index.html").read_text()
    assert 'href="torch/"' in listing and 'href="typing-extensions/"' in listing


@needs_uv
def test_compile_windows_picks_local_version_with_matching_hashes(
    tmp_path: Path, uv: UvRunner, pyindex: tuple[Path, str]
) -> None:
    root, url = pyindex
    (tmp_path / "req.in").write_text("torch==2.7.1+cu118\n")
    out = uv(
        "pip",
        "compile",
        "req.in",
        "--offline",
        "--no-cache",
        "--index-url",
        url,
        *WINDOWS_310,
        "--generate-hashes",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "torch==2.7.1+cu118 \\" in lines
    assert "typing-extensions==4.12.2 \\" in lines  # 4.99.0 needs Python 3.12
    hashes = {line.split("sha256:")[1].rstrip(" \\") for line in lines if "--hash=" in line}
    on_disk = {sha256_file(p) for p in (root / "files").glob("*.whl")}
    assert hashes <= on_disk
    win = root / "files" / "torch-2.7.1+cu118-cp310-cp310-win_amd64.whl"
    assert sha256_file(win) in hashes

    # No cp310 Windows wheel of cu126: the platform really is taken into account.
    (tmp_path / "cu126.in").write_text("torch==2.7.1+cu126\n")
    fail = uv(
        "pip", "compile", "cu126.in", "--offline", "--index-url", url, *WINDOWS_310, cwd=tmp_path
    )
    assert fail.returncode != 0
    assert "torch" in fail.stderr


@needs_uv
def test_compile_to_pylock_and_install_from_it(
    tmp_path: Path, uv: UvRunner, pyindex: tuple[Path, str]
) -> None:
    root, url = pyindex
    (tmp_path / "req.in").write_text("torch==2.7.1+cu118\n")
    out = uv(
        "pip",
        "compile",
        "req.in",
        "--offline",
        "--index-url",
        url,
        *WINDOWS_310,
        "--format",
        "pylock.toml",
        "-o",
        "pylock.win.toml",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lock = tomllib.loads((tmp_path / "pylock.win.toml").read_text())
    packages = {p["name"]: p for p in lock["packages"]}
    assert packages["torch"]["version"] == "2.7.1+cu118"
    [torch_wheel] = packages["torch"]["wheels"]
    win = root / "files" / "torch-2.7.1+cu118-cp310-cp310-win_amd64.whl"
    assert torch_wheel["url"] == (
        (root / "files").resolve().as_uri() + "/torch-2.7.1%2Bcu118-cp310-cp310-win_amd64.whl"
    )
    assert torch_wheel["hashes"] == {"sha256": sha256_file(win)}

    # A lock for this (Linux, 3.11) machine installs offline from the file:// URLs.
    linux = uv(
        "pip",
        "compile",
        "req.in",
        "--offline",
        "--index-url",
        url,
        *LINUX_311,
        "--format",
        "pylock.toml",
        "-o",
        "pylock.linux.toml",
        cwd=tmp_path,
    )
    assert linux.returncode == 0, linux.stderr
    if not (sys.platform == "linux" and sys.version_info[:2] == (3, 11)):
        return
    made = uv("venv", "--offline", "--python", sys.executable, str(tmp_path / "venv"))
    assert made.returncode == 0, made.stderr
    python = tmp_path / "venv" / "bin" / "python"
    inst = uv(
        "pip",
        "install",
        "--offline",
        "--python",
        str(python),
        "--preview-features",
        "pylock",
        "-r",
        "pylock.linux.toml",
        cwd=tmp_path,
    )
    assert inst.returncode == 0, inst.stderr
    probe = subprocess.run(
        [str(python), "-c", "import torch; print(torch.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip() == "2.7.1+cu118", probe.stderr


@needs_uv
def test_index_served_over_loopback_http(
    tmp_path: Path, uv: UvRunner, pyindex: tuple[Path, str]
) -> None:
    root, _ = pyindex
    (tmp_path / "req.in").write_text("torch==2.7.1+cu118\n")
    with serve_directory(root) as base:
        assert base.startswith("http://127.0.0.1:")
        out = uv(
            "pip",
            "compile",
            "req.in",
            "--no-cache",
            "--index-url",
            base + "simple/",
            *WINDOWS_310,
            "--format",
            "pylock.toml",
            cwd=tmp_path,
        )
    assert out.returncode == 0, out.stderr
    assert f"{base}files/torch-2.7.1%2Bcu118-cp310-cp310-win_amd64.whl" in out.stdout


# --------------------------------------------------------------------------- conda


def test_conda_package_contents_and_determinism(tmp_path: Path) -> None:
    def build(out: Path) -> Path:
        return build_conda_package(
            out,
            "cudatoolkit",
            "11.2.2",
            "h933977f_10",
            subdir="win-64",
            depends=["__cuda >=11.2"],
            files={"Library/bin/a.dll": "x"},
        )

    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    assert a.name == "cudatoolkit-11.2.2-h933977f_10.tar.bz2"
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(a, "r:bz2") as tar:
        names = tar.getnames()

        def read(name: str) -> bytes:
            member = tar.extractfile(name)
            assert member is not None
            return member.read()

        index = json.loads(read("info/index.json"))
        paths = json.loads(read("info/paths.json"))
        files = read("info/files").decode().splitlines()
        payload = read("Library/bin/a.dll")
    assert set(names) == {"info/index.json", "info/paths.json", "info/files", "Library/bin/a.dll"}
    assert index["name"] == "cudatoolkit" and index["version"] == "11.2.2"
    assert index["build"] == "h933977f_10" and index["build_number"] == 10
    assert (index["subdir"], index["platform"], index["arch"]) == ("win-64", "win", "x86_64")
    assert index["depends"] == ["__cuda >=11.2"]
    assert files == ["Library/bin/a.dll"]
    assert paths["paths"] == [
        {
            "_path": "Library/bin/a.dll",
            "path_type": "hardlink",
            "sha256": hashlib.sha256(payload).hexdigest(),
            "size_in_bytes": 1,
        }
    ]

    noarch = build_conda_package(tmp_path, "cuda-version", "11.2", "hb11dac2_3")
    with tarfile.open(noarch, "r:bz2") as tar:
        member = tar.extractfile("info/index.json")
        assert member is not None
        index = json.loads(member.read())
    assert (index["subdir"], index["noarch"], index["build_number"]) == ("noarch", "generic", 3)


def test_conda_channel_repodata(channel: str) -> None:
    root = Path(channel.removeprefix("file://"))
    assert channel.startswith("file:///")
    noarch = json.loads((root / "noarch" / "repodata.json").read_text())
    assert noarch["info"]["subdir"] == "noarch"
    assert set(noarch["packages"]) == {"cuda-version-11.2-hb11dac2_3.tar.bz2"}
    win = json.loads((root / "win-64" / "repodata.json").read_text())
    assert set(win["packages"]) == {
        "cudatoolkit-11.2.2-h933977f_10.tar.bz2",
        "cudnn-8.1.0.77-h3e0f4f4_0.tar.bz2",
    }
    for filename, record in win["packages"].items():
        data = (root / "win-64" / filename).read_bytes()
        assert record["sha256"] == hashlib.sha256(data).hexdigest()
        assert record["md5"] == hashlib.md5(data).hexdigest()
        assert record["size"] == len(data)
        assert record["subdir"] == "win-64"
    assert (root / "linux-64" / "repodata.json").is_file()
    assert not (root / ".tmp").exists()


def test_rattler_solves_cudnn_only_with_cuda_virtual_package(tmp_path: Path, channel: str) -> None:
    pytest.importorskip("rattler")
    platforms = ["win-64", "noarch"]
    ok = rattler_solve(
        [channel],
        ["cudnn 8.1.*"],
        platforms=platforms,
        virtual_packages=["__cuda=11.2", "__win=0"],
        cache_dir=tmp_path,
    )
    assert ok["ok"], ok
    solved = {r["name"]: r for r in ok["records"]}
    assert set(solved) == {"cudnn", "cudatoolkit"}
    assert solved["cudatoolkit"]["version"] == "11.2.2"
    assert solved["cudatoolkit"]["subdir"] == "win-64"
    assert solved["cudnn"]["url"] == f"{channel}/win-64/cudnn-8.1.0.77-h3e0f4f4_0.tar.bz2"

    no_cuda = rattler_solve(
        [channel],
        ["cudnn 8.1.*"],
        platforms=platforms,
        virtual_packages=["__win=0"],
        cache_dir=tmp_path,
    )
    assert not no_cuda["ok"]
    assert "__cuda" in no_cuda["error"]

    old_cuda = rattler_solve(
        [channel],
        ["cudnn 8.1.*"],
        platforms=platforms,
        virtual_packages=["__cuda=11.0"],
        cache_dir=tmp_path,
    )
    assert not old_cuda["ok"]

    linux = rattler_solve(
        [channel],
        ["cudnn 8.1.*", "cuda-version 11.2.*"],
        platforms=["linux-64", "noarch"],
        virtual_packages=["__cuda=12.4", "__glibc=2.17", "__unix=0"],
        cache_dir=tmp_path,
    )
    assert linux["ok"], linux
    assert {r["name"]: r["subdir"] for r in linux["records"]} == {
        "cudnn": "linux-64",
        "cudatoolkit": "linux-64",
        "cuda-version": "noarch",
    }


def test_rattler_installs_into_prefix(tmp_path: Path, channel: str) -> None:
    pytest.importorskip("rattler")
    prefix = tmp_path / "env"
    result = rattler_install(
        [channel],
        ["cudnn 8.1.*"],
        prefix,
        platforms=["win-64", "noarch"],
        virtual_packages=["__cuda=11.2", "__win=0"],
        cache_dir=tmp_path / "cache",
    )
    assert result["ok"], result
    assert (prefix / "Library" / "bin" / "cudart64_110.dll").read_text() == "not really a dll\n"
    assert (prefix / "Library" / "bin" / "cudnn64_8.dll").is_file()
    meta = {p.name for p in (prefix / "conda-meta").glob("*.json")}
    assert meta == {"cudatoolkit-11.2.2-h933977f_10.json", "cudnn-8.1.0.77-h3e0f4f4_0.json"}


def test_fallback_indexer_channel_solves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without py-rattler's indexer the hand-written repodata.json must be just as usable."""
    pytest.importorskip("rattler")
    import localrepos

    monkeypatch.setattr(localrepos, "_rattler_index", lambda root: False)
    pkgs = [
        build_conda_package(
            tmp_path / "pkgs",
            "cudatoolkit",
            "11.8.0",
            "h09e9e62_11",
            subdir="linux-64",
            depends=["__cuda >=11.8"],
        ),
        build_conda_package(tmp_path / "pkgs", "cuda-version", "11.8", "h70ddcb2_3"),
    ]
    url = build_conda_channel(tmp_path / "channel", pkgs)
    repodata = json.loads((tmp_path / "channel" / "linux-64" / "repodata.json").read_text())
    [record] = repodata["packages"].values()
    assert "indexed_timestamp" not in record  # written by the fallback, not by rattler
    assert record["sha256"] == sha256_file(tmp_path / "channel" / "linux-64" / pkgs[0].name)
    assert (tmp_path / "channel" / "noarch" / "repodata.json").is_file()
    result = rattler_install(
        [url],
        ["cudatoolkit 11.8.*", "cuda-version"],
        tmp_path / "env",
        platforms=["linux-64", "noarch"],
        virtual_packages=["__cuda=12.0", "__glibc=2.28"],
        cache_dir=tmp_path / "cache",
    )
    assert result["ok"], result
    assert (tmp_path / "env" / "share" / "gpuenv-test" / "cudatoolkit.txt").is_file()
