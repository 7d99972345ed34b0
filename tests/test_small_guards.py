"""Small checks that no other test would miss if they were deleted (issue 20's survivors): a
one-part driver version, what the lock digest covers, verify's CUDA/cuDNN version checks, and
the CACHEDIR.TAG guard of `cache clean`.

Facts: NVIDIA driver versions have at least two parts (457.49, 535.183.01; the driver release
notes); `cache clean` must not empty a folder that is not gpuenv's (cache.py's contract).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from gpuenv.cache import TAG_NAME, CacheError, clean_cache, tag_cache
from gpuenv.lock.model import LockInputs
from gpuenv.machine import MachineError, parse_driver_version
from gpuenv.verify import Expectations, ExpectedFramework
from gpuenv.verify.judge import judge
from gpuenv.verify.runner import ProbeRun
from installrepos import jax_plan


@pytest.mark.parametrize("text", ["550", " 550 ", "550.", ".54", "550..1", "R550"])
def test_a_driver_version_needs_two_dotted_numbers(text: str) -> None:
    with pytest.raises(MachineError, match="not an NVIDIA driver version"):
        parse_driver_version(text)


def test_a_two_part_driver_version_is_read() -> None:
    assert parse_driver_version("457.49") == (457, 49)


def _inputs(**changes: object) -> LockInputs:
    plan = jax_plan("0.4.30", conda=("cudatoolkit=11.2",))
    base = LockInputs(plan, ("https://conda.example/a",), False, None, ())
    return dataclasses.replace(base, **changes) if changes else base


def test_the_lock_digest_covers_channels_and_the_cut_off() -> None:
    base = _inputs().digest()
    assert _inputs().digest() == base
    assert _inputs(channels=("https://conda.example/b",)).digest() != base
    assert _inputs(exclude_newer="2024-06-30").digest() != base
    assert (
        _inputs(exclude_newer="2024-06-30").digest() != _inputs(exclude_newer="2024-07-01").digest()
    )


def test_channels_do_not_matter_to_a_plan_without_conda_packages() -> None:
    plan = jax_plan("0.4.30")
    a = LockInputs(plan, ("https://conda.example/a",), False, None, ())
    assert a.digest() == dataclasses.replace(a, channels=("https://conda.example/b",)).digest()


FIXTURES = Path(__file__).parent / "verify" / "fixtures"


def _torch_cu126() -> dict[str, object]:
    """torch 2.6.0+cu126 on a working GPU: the recorded CPU probe with GPU facts written in."""
    facts = copy.deepcopy(json.loads((FIXTURES / "torch-2.13.0-cpu.recorded.json").read_text()))
    facts.update(
        version="2.6.0+cu126",
        cuda="12.6",
        cudnn_version=90501,
        cuda_available=True,
        device_count=1,
        arch_list=["sm_80", "sm_86", "sm_90"],
        devices=[{"index": 0, "name": "NVIDIA GeForce RTX 3090", "capability": "8.6"}],
    )
    return facts


def _judge(cuda: str, cudnn: str):  # type: ignore[no-untyped-def]
    exp = Expectations(
        accelerator="cuda",
        gpu_cc="8.6",
        gpu_name="NVIDIA GeForce RTX 3090",
        source="plan",
        frameworks={
            "torch": ExpectedFramework("2.6.0", "cu" + cuda.replace(".", ""), True, cuda, cudnn)
        },
    )
    run = ProbeRun("x", _torch_cu126(), 0, False, 3.0, "done", ())
    return judge("torch", exp, run)


def test_verify_flags_a_cuda_build_other_than_the_plans() -> None:
    r = _judge("11.8", "9.5.1")
    assert any("built for CUDA 12.6, the plan chose 11.8" in p for p in r.problems), r.problems
    assert any(c.name == "CUDA version" and not c.ok for c in r.checks)


def test_verify_flags_a_cudnn_major_other_than_the_plans() -> None:
    r = _judge("12.6", "8.9.7")
    assert any("uses cuDNN 9.5.1, the plan chose 8.9.7" in p for p in r.problems), r.problems
    same = _judge("12.6", "9.1.0")  # a minor difference is only a note: cuDNN 9 keeps its ABI
    assert not any("cuDNN" in p for p in same.problems)


def test_cache_clean_refuses_an_untagged_folder_with_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "thesis.tex").write_text("years of work")
    (home / "recipes").mkdir()  # a name gpuenv also uses does not make the folder gpuenv's
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(home))
    with pytest.raises(CacheError, match="nothing was removed"):
        clean_cache()
    assert (home / "projects" / "thesis.tex").read_text() == "years of work"
    tag_cache(home)  # once tagged as a cache, it is one: gpuenv's own kinds go, nothing else
    assert (home / TAG_NAME).is_file()
    clean_cache()
    assert sorted(p.name for p in home.iterdir()) == sorted([TAG_NAME, "projects"])  # recipes went
    assert (home / "projects" / "thesis.tex").read_text() == "years of work"


def test_auto_locks_an_old_stack_as_of_its_era(tmp_path: Path) -> None:
    # the plan's era (resolve sets it for old stacks) reaches uv's command line under `auto`;
    # `none` drops it and a date replaces it. (An offline uv run against an index with upload
    # times is not made here: uv's own handling of --exclude-newer is uv's to test.)
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.pipeline import LockOptions, lock_inputs
    from gpuenv.lock.pypi import pip_request

    plan = dataclasses.replace(jax_plan("0.4.30"), exclude_newer="2024-07-31")
    indexes = IndexConfig(index_url="http://127.0.0.1:9/simple", origin="test")

    def cutoff(option: str) -> tuple[str, ...]:
        inputs = lock_inputs(
            plan, LockOptions(output=tmp_path / "x.yml", exclude_newer=option), indexes
        )
        return pip_request(plan, indexes, inputs.exclude_newer, uv="uv").cutoff

    assert cutoff("auto")[:2] == ("--exclude-newer", "2024-07-31")
    assert cutoff("none") == ()
    assert cutoff("2023-01-02")[:2] == ("--exclude-newer", "2023-01-02")
