"""`--gpu NAME` as people type it: brand words left out, a part of a name, any case.

Expected compute capabilities come from NVIDIA's CUDA GPU tables (developer.nvidia.com/cuda-gpus
and cuda-legacy-gpus), not from recipes/:
- GeForce RTX 3090 and RTX 3060 (and the 3060 Ti): 8.6; GeForce GTX 1080 Ti: 6.1; GeForce 940M:
  5.0; Tesla T4: 7.5; GeForce RTX 2070 SUPER: 7.5; GeForce GTX 970: 5.2; A100: 8.0; H100: 9.0;
  GeForce RTX 4090: 8.9; Tesla P100: 6.0; V100: 7.0.
- Two GPUs are sold as "TITAN X": the GeForce GTX TITAN X (Maxwell, 5.2) and the TITAN X (Pascal)
  (6.1). "16GB" is the memory of both Tesla P100 (6.0) and V100 (7.0) boards. "750": the GTX 750
  and 750 Ti are Maxwell GM107 (5.0); pci.ids also names a Kepler GK106 (3.0) GTX 750 Ti.
- PCI device ids from NVIDIA's driver name tables (supported-gpus.json): 10de:1347 GeForce 940M
  (GM108), 10de:20b5 A100 80GB PCIe, 10de:1080 GeForce GTX 580 (Fermi, 2.0); 10de:2901 B200
  (g_nv_name_released.h, open-gpu-kernel-modules), compute capability 10.0.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
import time

import pytest

from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.gpu_lookup import lookup_gpu
from gpuenv.resolve import TargetError
from lockdata import in_process

DRIVER = "550.54.14"


@pytest.mark.parametrize(
    ("text", "cc", "name"),
    [
        ("RTX 3090", "8.6", "GeForce RTX 3090"),
        ("RTX 3060", "8.6", "GeForce RTX 3060"),  # the exact name, never the 3060 Ti
        ("RTX 3060 Ti", "8.6", "GeForce RTX 3060 Ti"),
        ("GTX 1080 Ti", "6.1", "GeForce GTX 1080 Ti"),
        ("1080 Ti", "6.1", "GeForce GTX 1080 Ti"),
        ("geforce gtx 1080 ti", "6.1", "GeForce GTX 1080 Ti"),
        ("GEFORCE GTX-1080-TI", "6.1", "GeForce GTX 1080 Ti"),
        ("NVIDIA GTX 1080 Ti", "6.1", "GeForce GTX 1080 Ti"),
        ("940M", "5.0", "GeForce 940M"),
        ("T4", "7.5", "Tesla T4"),
        ("nvidia t4", "7.5", "Tesla T4"),
        ("A100", "8.0", "A100"),  # several A100 boards, one compute capability: named as typed
        ("H100", "9.0", "H100"),
        ("RTX 4090", "8.9", "GeForce RTX 4090"),
        ("RTX 3090 24GB", "8.6", "GeForce RTX 3090"),  # a known name inside a longer one
        ("GeForce RTX 3060", "8.6", "GeForce RTX 3060"),  # full names: as before
        ("Tesla T4", "7.5", "Tesla T4"),
        ("RTX 2070 Super", "7.5", "GeForce RTX 2070 SUPER"),  # one GPU, two spellings
        ("970", "5.2", "GeForce GTX 970"),  # "97.0" is no compute capability: a model number
    ],
)
def test_typed_names_resolve_to_their_compute_capability(
    describe, text: str, cc: str, name: str
) -> None:
    gpu = describe(text, DRIVER, "linux").gpus[0]
    assert (gpu.compute_capability, gpu.name) == (cc, name)


def test_rtx_3060_is_never_the_ti(describe) -> None:
    plain = describe("RTX 3060", DRIVER, "linux").gpus[0]
    ti = describe("RTX 3060 Ti", DRIVER, "linux").gpus[0]
    assert plain.name == "GeForce RTX 3060" and ti.name == "GeForce RTX 3060 Ti"
    assert plain.pci_id != ti.pci_id  # each pinned to its own row, as the full names are
    assert plain.pci_id == describe("GeForce RTX 3060", DRIVER, "linux").gpus[0].pci_id


def test_a_name_of_several_gpus_plans_for_all_and_says_which(kb, describe) -> None:
    from gpuenv.resolve import resolve

    machine = describe("A100", DRIVER, "linux")
    assert machine.gpus[0].pci_id is None  # the name does not pin one board down
    plan = resolve(machine, ["torch"], kb=kb)
    assert plan.gpu is not None and plan.gpu["compute_capability"] == "8.0"
    warning = next(w for w in plan.warnings if "'A100' names" in w)
    for board in ("A100-PCIE-40GB", "A100-SXM4-80GB", "A100 80GB PCIe"):
        assert board in warning
    assert "8.0" in warning and "full name" in warning


def test_a_short_name_of_several_chips_warns_as_the_full_name_does(kb, describe) -> None:
    from gpuenv.resolve import resolve

    short = resolve(describe("GTX 750 Ti", DRIVER, "linux"), ["torch"], kb=kb)
    full = resolve(describe("GeForce GTX 750 Ti", DRIVER, "linux"), ["torch"], kb=kb)
    assert short.gpu == full.gpu
    assert [w for w in short.warnings if "GK106" in w] == [w for w in full.warnings if "GK106" in w]
    assert any("GK106" in w for w in short.warnings)


@pytest.mark.parametrize(
    ("text", "cc", "pci"),
    [
        ("1347", "5.0", "10de:1347"),  # no GPU is called "1347": a PCI device id
        ("20b5", "8.0", "10de:20b5"),
        ("10de:1080", "2.0", "10de:1080"),  # with its vendor: always an id (GeForce GTX 580)
        ("0x1080", "2.0", "10de:1080"),
        ("1080", "6.1", None),  # a model number people type (GTX 1080, 1080 Ti): the name wins
        ("A100", "8.0", None),
        ("B200", "10.0", "10de:2901"),  # was "unknown PCI id 'B200'"; the name pins its id
    ],
)
def test_four_hex_digits_are_an_id_only_when_no_gpu_is_called_so(
    describe, text: str, cc: str, pci: str | None
) -> None:
    gpu = describe(text, DRIVER, "linux").gpus[0]
    assert (gpu.compute_capability, gpu.pci_id) == (cc, pci)


@pytest.mark.parametrize(("text", "cc"), [("86", "8.6"), ("120", "12.0"), ("8.6", "8.6")])
def test_a_compute_capability_stays_one(describe, text: str, cc: str) -> None:
    gpu = describe(text, DRIVER, "linux").gpus[0]
    assert (gpu.compute_capability, gpu.source) == (cc, "described (--gpu)")


def test_resolve_json_in_process_reads_typed_names() -> None:
    for text, cc in (("RTX 3090", "8.6"), ("940M", "5.0"), ("A100", "8.0")):
        code, out, err = in_process(
            "resolve", "torch", "--gpu", text, "--driver", DRIVER, "--os", "linux", "--json"
        )
        assert code == 0, err
        assert json.loads(out)["gpu"]["compute_capability"] == cc


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("RTX", ["GeForce RTX", "more", "full name"]),  # no model number: too vague
        ("GeForce", ["GeForce GTX", "more", "compute capability"]),
        ("TITAN X", ["5.2", "6.1", "GeForce GTX TITAN X", "TITAN X (Pascal)"]),
        ("16GB", ["6.0", "7.0", "P100", "V100", "different compute capability"]),
        ("GT 730", ["--gpu 2.1", "--gpu 3.5"]),  # one name, chips of 2.1, 3.0 and 3.5
        ("750", ["different compute capability", "GeForce GTX 750 Ti (3.0)", "(5.0)"]),
        ("999", ["compute capability 99.9", "no known GPU generation"]),
        ("10de:zzzz", ["unknown GPU"]),
        ("10de:ffff", ["unknown PCI id"]),
        ("../../etc/passwd", ["unknown GPU", "compute capability"]),
        ("Quadro RTX 3060", ["unknown GPU"]),  # a brand typed must be the GPU's
        ("GTX 1008 Ti", ["did you mean", "GeForce GTX 1080 Ti"]),
        ("", ["--gpu is empty"]),
        ("   ", ["--gpu is empty"]),
        ("RTX 3090\n", ["control character"]),
        ("RTX\x1b[31m 3090", ["control character"]),
    ],
)
def test_vague_ambiguous_or_hostile_names_are_refused(text: str, needles: list[str]) -> None:
    code, out, err = in_process("resolve", "torch", "--gpu", text, "--os", "linux")
    assert code == 2 and out == ""
    assert "Traceback" not in err and err.count("\n") == 1  # one line on stderr
    for needle in needles:
        assert needle in err, (needle, err)
    assert len(err) < 1200  # a few candidates, never hundreds


def test_a_huge_name_is_refused_quickly() -> None:
    for text in ("x" * 10_000, "RTX 3090 " * 1_200):
        start = time.perf_counter()
        code, _, err = in_process("resolve", "torch", "--gpu", text, "--os", "linux")
        assert time.perf_counter() - start < 2.0
        assert code == 2 and "characters" in err and len(err) < 400


def test_every_known_name_reads_as_detection_reads_it(kb: KnowledgeBase) -> None:
    # Typed reading starts where detection's ends: a name detection knows never changes
    # (bar four bare hex digits, a name when typed: "B200", tested above).
    compared = 0
    for record in kb.gpus:
        for name in (record.name, *record.aliases, "NVIDIA " + record.name):
            if re.fullmatch(r"[0-9a-fA-F]{4}", name):
                continue
            compared += 1
            try:
                detected = lookup_gpu(kb, name)
            except TargetError as exc:
                with pytest.raises(TargetError) as typed:
                    lookup_gpu(kb, name, typed=True)
                assert str(typed.value) == str(exc)
            else:
                assert lookup_gpu(kb, name, typed=True) == detected
    assert compared >= len(kb.gpus) > 0  # at least each record's "NVIDIA ..." form


def test_detection_stays_strict(kb: KnowledgeBase) -> None:
    # nvidia-smi reports full names; a short one there means something is wrong, not a typo.
    for name in ("RTX 3090", "A100", "T4"):
        with pytest.raises(TargetError):
            lookup_gpu(kb, name, pci_id=None)


def test_a_cached_knowledge_base_builds_the_brand_free_index_on_first_use(
    kb: KnowledgeBase,
) -> None:
    fresh = dataclasses.replace(kb)  # as parsed: what the loader pickles into its cache
    cached = pickle.loads(pickle.dumps(fresh))
    assert (
        cached.names._by_model_index is None
    )  # a compute capability or a detected name never pays
    match = cached.match_typed_gpu("RTX 3090")
    assert match is not None and match.record.name == "GeForce RTX 3090"
    assert cached.names._by_model_index
