"""What the index probe counts as published, against real HTTP indexes on loopback (issue 28).

A wheel for another platform is not published for this one (a Linux plan must not choose a
release whose only wheels are for Windows); an index that answers 404 for a project does not
have it, which is not the same as an index that did not answer: the first makes a lock that
cannot be satisfied exit 3 (infeasible), only the second exit 5 (a source unreachable).

The framework indexes the knowledge base names are redirected to a local index that has no
project at all (each look-up a real 404), so nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import gpuenv.lock.availability as availability
from gpuenv.errors import INFEASIBLE_EXIT
from gpuenv.index.config import IndexConfig
from gpuenv.lock.availability import framework_packages, gather, resolve_with_sources
from gpuenv.resolve import ResolveError
from isolation import only_index
from localrepos import build_simple_index, build_wheel, serve_directory
from lockdata import in_process

# A GPU whose driver takes the newest torch: its plan is torch 2.15.0 [cu132], the build PyPI
# itself serves for linux-64 (so the user's index alone can satisfy it).
MACHINE = ("--gpu", "RTX 3090", "--driver", "580.65.06")
LINUX = "manylinux_2_28_x86_64"


@dataclass(frozen=True)
class Served:
    root: Path  # served over HTTP on 127.0.0.1
    base: str  # its URL

    def index(self, name: str, wheels: list[Path]) -> str:
        """A PEP 503 index of `wheels` under the served folder, by its http:// URL."""
        build_simple_index(self.root / name, wheels)
        return f"{self.base}{name}/simple/"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    root = tmp_path / "served"
    root.mkdir()
    with serve_directory(root) as base:
        yield Served(root, base)


@pytest.fixture(autouse=True)
def framework_indexes_empty(
    monkeypatch: pytest.MonkeyPatch, served: Served, kb: Any, tmp_path: Path
) -> None:
    """Every framework index answers 404 for every project (a real one, over HTTP); no probe
    answer is remembered between tests."""
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(tmp_path / "gpuenv-cache"))
    monkeypatch.setenv("GPUENV_PROBE_TTL", "0")
    empty = served.index("empty", [])
    framework = set().union(*framework_packages(kb, ["torch"], "linux-64").values())
    real = availability._fetch

    def fetch(index: str, project: str) -> list[str]:
        return real(empty if index in framework else index, project)

    monkeypatch.setattr(availability, "_fetch", fetch)


def _wheel(tmp_path: Path, version: str, platform: str) -> Path:
    return build_wheel(tmp_path / "wheels", "torch", version, tag=f"py3-none-{platform}")


def test_windows_wheels_are_not_published_for_linux(
    served: Served, tmp_path: Path, kb: Any, describe: Any
) -> None:
    """torch 2.15.0 has only a Windows wheel here, 2.14.1 a Linux one: the Linux plan takes
    2.14.1 (its own build for the GPU), never 2.15.0."""
    index = served.index(
        "mixed",
        [_wheel(tmp_path, "2.15.0", "win_amd64"), _wheel(tmp_path, "2.14.1", LINUX)],
    )
    config = IndexConfig(index_url=index, origin="test")
    found = gather(kb, ["torch"], "linux-64", config)
    assert set(found.versions["torch"]) == {"2.14.1"} and found.unreachable == ()
    assert set(gather(kb, ["torch"], "win-64", config).versions["torch"]) == {"2.15.0"}
    machine = describe("RTX 3090", "580.65.06")
    sourced = resolve_with_sources(machine, ["torch"], kb, config)
    assert sourced.ideal.frameworks["torch"].version == "2.15.0"
    torch = sourced.plan.frameworks["torch"]
    assert (torch.version, torch.gpu) == ("2.14.1", True)


def test_a_project_the_index_does_not_have_is_not_an_unreachable_source(
    served: Served, kb: Any, describe: Any
) -> None:
    config = IndexConfig(index_url=served.index("no-torch", []), origin="test")
    found = gather(kb, ["torch"], "linux-64", config)
    assert found.unreachable == () and found.versions["torch"] == {}
    with pytest.raises(ResolveError) as err:  # exit 3, not SourceUnreachableError's 5
        resolve_with_sources(describe("RTX 3090", "580.65.06"), ["torch"], kb, config)
    assert err.value.exit_code == INFEASIBLE_EXIT
    assert "unreachable" not in str(err.value)


@pytest.mark.parametrize(
    "wheels",
    [[], [("2.15.0", "win_amd64")]],
    ids=["index-without-torch", "only-windows-wheels"],
)
def test_a_lock_no_reachable_source_can_satisfy_exits_3(
    wheels: list[tuple[str, str]],
    served: Served,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every source answered and none has a Linux torch: the requirements cannot be met here
    (exit 3), and nothing was unreachable (exit 5 would send the user to check the network)."""
    index = served.index("user", [_wheel(tmp_path, v, p) for v, p in wheels])
    only_index(monkeypatch, index)
    out = tmp_path / "torch.conda-lock.yml"
    code, stdout, stderr = in_process("lock", "torch", *MACHINE, "-o", str(out))
    assert code == INFEASIBLE_EXIT, stdout + stderr
    assert "unreachable" not in stderr and "could not reach" not in stderr
    assert "no reachable source has torch" in stderr
    assert not out.exists()


@pytest.mark.parametrize("as_url", [False, True], ids=["path", "file-url"])
def test_a_find_links_folder_publishes_its_wheels(
    as_url: bool, tmp_path: Path, kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip's no-index with a find-links folder (an offline mirror): the probe lists the
    folder's own wheels for each framework package, named by path or by file:// URL (a space
    in it percent-encoded); wheels of other projects there are not taken for torch's."""
    for name in ("UV_INDEX", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    folder = tmp_path / "mirror folder"
    folder.mkdir()
    for version in ("2.14.1", "2.15.0"):
        wheel = _wheel(tmp_path, version, LINUX)
        (folder / wheel.name).write_bytes(wheel.read_bytes())
    other = build_wheel(tmp_path / "wheels", "torchvision", "0.30.0", tag=f"py3-none-{LINUX}")
    (folder / other.name).write_bytes(other.read_bytes())
    link = folder.as_uri() if as_url else str(folder)
    config = IndexConfig(find_links=(link,), no_index=True, origin="test")
    found = gather(kb, ["torch"], "linux-64", config)
    assert set(found.versions["torch"]) == {"2.14.1", "2.15.0"}
    assert all(folder.as_uri() in sources for sources in found.versions["torch"].values())
    assert found.unreachable == ()


def test_a_wheel_tagged_for_a_bare_cp_interpreter_counts_for_any_python(
    tmp_path: Path, kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cp` with no version is no Python version to hold a wheel to: any Python, not a crash;
    `cp311` is Python 3.11 and `py3` any."""
    for name in ("UV_INDEX", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    folder = tmp_path / "mirror"
    folder.mkdir()
    for version, interpreter in (("2.14.1", "cp"), ("2.15.0", "cp311"), ("2.13.0", "py3")):
        (folder / f"torch-{version}-{interpreter}-none-{LINUX}.whl").write_bytes(b"x")
    config = IndexConfig(find_links=(str(folder),), no_index=True, origin="test")
    found = gather(kb, ["torch"], "linux-64", config)
    assert found.pythons["torch"] == {
        "2.14.1": frozenset({"*"}),
        "2.15.0": frozenset({"3.11"}),
        "2.13.0": frozenset({"*"}),
    }


def _asking(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The indexes the probe asks (through the fixture's redirect), in the order asked."""
    asked: list[str] = []
    real = availability._fetch

    def fetch(index: str, project: str) -> list[str]:
        asked.append(index)
        return real(index, project)

    monkeypatch.setattr(availability, "_fetch", fetch)
    return asked


def test_a_plan_for_the_cpu_asks_no_index_of_cuda_builds(
    served: Served, tmp_path: Path, kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyTorch's cu* indexes publish only CUDA builds, which a CPU plan never weighs; its CPU
    index is asked, as the user's is."""
    asked = _asking(monkeypatch)
    mine = served.index("mine", [_wheel(tmp_path, "2.14.1", LINUX)])
    config = IndexConfig(index_url=mine, origin="test")
    every = framework_packages(kb, ["torch"], "linux-64")["torch"]
    for_cpu = framework_packages(kb, ["torch"], "linux-64", gpu=False)["torch"]
    assert for_cpu and len(for_cpu) < len(every)
    cpu_found = gather(kb, ["torch"], "linux-64", config, gpu=False)
    assert sorted(asked) == sorted([mine, *for_cpu])
    assert (
        cpu_found.versions["torch"] == gather(kb, ["torch"], "linux-64", config).versions["torch"]
    )
    assert set(asked[len(for_cpu) + 1 :]) == {mine, *every}  # a GPU plan asks them all


@pytest.mark.parametrize(
    ("gpu", "flags", "asks_cuda"),
    [(None, {}, False), ("RTX 3090", {"no_gpu": True}, False), ("RTX 3090", {}, True)],
    ids=["no-gpu-here", "--no-gpu", "gpu-plan"],
)
def test_the_lock_probes_cuda_indexes_only_for_a_gpu_plan(
    gpu: Any,
    flags: dict[str, Any],
    asks_cuda: bool,
    served: Served,
    kb: Any,
    describe: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _asking(monkeypatch)
    config = IndexConfig(index_url=served.index("none", []), origin="test")
    cuda = (
        framework_packages(kb, ["torch"], "linux-64")["torch"]
        - framework_packages(kb, ["torch"], "linux-64", gpu=False)["torch"]
    )
    machine = describe(gpu, "580.65.06" if gpu else None)
    with pytest.raises(ResolveError):  # nothing is published here: only what was asked counts
        resolve_with_sources(machine, ["torch"], kb, config, **flags)
    assert asked and bool(cuda & set(asked)) == asks_cuda
