"""A package the user asks for is planned from data or refused, never dropped.

Expected pairings come from the projects' own compatibility tables, not from recipes/:
torchaudio's README ('torch 2.5.1 <-> torchaudio 2.5.1'), torchvision's README ('torch 2.5 <->
torchvision 0.20'), and JAX's jaxlib pins (jax 0.4.30 requires jaxlib 0.4.30, jax's setup.py at
jax-v0.4.30).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import ResolveError, resolve

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def _pins(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.requirement for p in plan.pip]


def _without(kb: KnowledgeBase, project: str) -> KnowledgeBase:
    """The knowledge base with no `project` companion recorded for any torch/jax release."""
    frameworks = dict(kb.frameworks)
    for name, fw in kb.frameworks.items():
        releases = tuple(
            dataclasses.replace(r, related={k: v for k, v in r.related.items() if k != project})
            for r in fw.releases
        )
        frameworks[name] = dataclasses.replace(fw, releases=releases)
    return dataclasses.replace(kb, frameworks=frameworks)


def test_a_torchaudio_range_picks_the_torch_it_belongs_to(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), ["torchaudio==2.5.1"], kb=kb)
    assert plan.frameworks["torch"].version == "2.5.1"
    assert any(re.fullmatch(r"torchaudio==2\.5\.1(\+cu\d+)?", p) for p in _pins(plan))


def test_a_torchvision_range_picks_the_torch_it_belongs_to(kb, describe) -> None:
    plan = resolve(
        describe("GeForce RTX 4090", "580.95.05", "linux"), ["torchvision==0.20.1"], kb=kb
    )
    assert plan.frameworks["torch"].version == "2.5.1"
    assert any(p.startswith("torchvision==0.20.1") for p in _pins(plan))


def test_jaxlib_asked_for_is_pinned_and_its_range_honoured(kb, describe) -> None:
    plan = resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), ["jaxlib==0.4.30"], kb=kb)
    assert plan.frameworks["jax"].version == "0.4.30"
    assert "jaxlib==0.4.30" in _pins(plan)
    assert _pins(plan).count("jaxlib==0.4.30") == 1


@pytest.mark.parametrize(
    ("request_", "project"),
    [("torchaudio", "torchaudio"), ("torchvision", "torchvision"), ("jaxlib", "jaxlib")],
)
def test_no_recorded_companion_is_an_error_naming_it(kb, describe, request_, project) -> None:
    bare = _without(kb, project)
    with pytest.raises(ResolveError, match=project):
        resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), [request_], kb=bare)


def test_releases_without_the_companion_are_skipped_not_emptied(kb, describe) -> None:
    # Only the newest torch release loses its torchaudio: the plan takes the one before it,
    # with torchaudio, and says why the newest was passed over.
    newest = kb.frameworks["torch"].releases[0]
    releases = tuple(
        dataclasses.replace(r, related={k: v for k, v in r.related.items() if k != "torchaudio"})
        if r is newest
        else r
        for r in kb.frameworks["torch"].releases
    )
    torch = dataclasses.replace(kb.frameworks["torch"], releases=releases)
    edited = dataclasses.replace(kb, frameworks={**kb.frameworks, "torch": torch})
    plan = resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), ["torchaudio"], kb=edited)
    assert plan.frameworks["torch"].version != newest.version
    assert any(p.startswith("torchaudio==") for p in _pins(plan))
    assert any("no torchaudio release is recorded" in r for r in plan.reasons)


def test_the_cli_exits_3_naming_the_package(tmp_path, gpuenv_cli) -> None:
    root = tmp_path / "recipes"
    shutil.copytree(RECIPES, root)
    text = (root / "pytorch.toml").read_text(encoding="utf-8")
    (root / "pytorch.toml").write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("torchaudio =")),
        encoding="utf-8",
    )
    result = gpuenv_cli(
        "resolve",
        "torch",
        "torchaudio",
        "--gpu",
        "GeForce RTX 4090",
        "--driver",
        "580.95.05",
        env={"GPUENV_RECIPES": str(root), "GPUENV_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 3, result.stderr
    assert "torchaudio" in result.stderr and "Traceback" not in result.stderr


def test_a_companion_range_nothing_meets_is_an_error_that_says_so(kb, describe) -> None:
    machine = describe("GeForce RTX 4090", "580.95.05", "linux")
    with pytest.raises(ResolveError, match=r"torchaudio==99\.0.*companion in that range"):
        resolve(machine, ["torchaudio==99.0"], kb=kb)


# What each companion wheel's METADATA requires of torch (configured index, read 2026-12-01):
# torchaudio-2.10.0-cp312-cp312-{manylinux_2_28_x86_64,manylinux_2_28_aarch64,win_amd64,
# macosx_11_0_arm64}.whl `Requires-Dist: torch==2.10.0`; torchaudio-2.11.1-py3-none-*.whl
# (uploaded with torch 2.15.0, 2026-10-28) `Requires-Dist: torch>=2.11`;
# torchvision-0.29.2-py3-none-*.whl (same day) `Requires-Dist: torch (>=2.14.0)`.
TORCHAUDIO_REQUIRES = {"2.10.0": "==2.10.0", "2.11.1": ">=2.11"}
TORCHVISION_REQUIRES = {"0.29.2": ">=2.14.0"}
# torch releases 2.10-2.15 on the index whose companions the METADATA above decides
TORCH_AUDIO_RELEASES = ["2.10.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]


def _companion(plan, project: str) -> str:  # type: ignore[no-untyped-def]
    pins = [p for p in _pins(plan) if p.startswith(f"{project}==")]
    assert len(pins) == 1, pins
    return pins[0].split("==", 1)[1].split("+", 1)[0]


@pytest.mark.parametrize("torch", TORCH_AUDIO_RELEASES)
def test_torchaudio_is_planned_with_every_torch_its_metadata_admits(kb, describe, torch) -> None:
    from packaging.specifiers import SpecifierSet

    plan = resolve(describe(None, None, "linux"), [f"torch=={torch}", "torchaudio"], kb=kb)
    assert plan.frameworks["torch"].version == torch
    audio = _companion(plan, "torchaudio")
    assert audio in TORCHAUDIO_REQUIRES, f"torchaudio {audio}: not a wheel read for this test"
    assert torch in SpecifierSet(TORCHAUDIO_REQUIRES[audio])


def test_torch_2_15_has_the_torchvision_released_with_it(kb, describe) -> None:
    from packaging.specifiers import SpecifierSet

    plan = resolve(describe(None, None, "linux"), ["torch==2.15.0", "torchvision"], kb=kb)
    vision = _companion(plan, "torchvision")
    assert vision in TORCHVISION_REQUIRES and "2.15.0" in SpecifierSet(TORCHVISION_REQUIRES[vision])


@pytest.mark.parametrize(
    ("gpu", "driver"),
    [("8.9", "570.86.15"), ("8.9", "580.95.05"), ("6.0", "550.54.14"), (None, None)],
)
@pytest.mark.parametrize("project", ["torchaudio", "torchvision"])
def test_asking_for_a_companion_does_not_hold_torch_back(
    kb, describe, gpu, driver, project
) -> None:
    # Every torch release 2.10-2.15 has a torchaudio and a torchvision on the index that its
    # METADATA admits (above), so asking for one must not change which torch is chosen.
    machine = describe(gpu, driver, "linux")
    alone = resolve(machine, ["torch"], kb=kb).frameworks["torch"]
    paired = resolve(machine, ["torch", project], kb=kb).frameworks["torch"]
    assert (paired.version, paired.variant) == (alone.version, alone.variant)


def test_a_python_the_release_has_is_never_said_to_be_missing(describe, kb) -> None:  # type: ignore[no-untyped-def]
    # torch 2.5.1 publishes cp313 wheels for linux-64, torchvision 0.20.1 does not (their file
    # lists on the default index); the refusal used to say "no wheels for Python 3.13 ... (has
    # ..., 3.13)"
    from gpuenv.resolve.target import Availability

    machine = describe("8.6", "560.35.03", "linux", "x86_64")
    with pytest.raises(
        ResolveError, match=r"its torchvision has no wheels for Python 3\.13"
    ) as err:
        resolve(machine, ["torch==2.5.1", "torchvision"], kb=kb, python="3.13")
    assert "(has 3.9, 3.10, 3.11, 3.12)" in str(err.value)
    with pytest.raises(ResolveError, match=r"no wheels for Python 3\.8 on linux-64 \(has 3\.9"):
        resolve(machine, ["torch==2.5.1"], kb=kb, python="3.8")
    # the sources' file lists lack the Python (a lock's probe): said as theirs
    seen = Availability(
        versions={"torch": {"2.5.1": ("default",)}},
        pythons={"torch": {"2.5.1": frozenset({"3.12"})}},
    )
    with pytest.raises(ResolveError, match=r"reachable sources have no Python 3\.11 wheels"):
        resolve(machine, ["torch==2.5.1"], kb=kb, python="3.11", available=seen)
