"""A GPU as people and tools name it (a name, a typed part of one, a PCI id) found in the
knowledge base, or an error that says how to go on; and the warnings when a name stands for
several chips. machine/describe (--gpu), lab files and resolve all look GPUs up here."""

from __future__ import annotations

import re
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.machine import Gpu
from gpuenv.recipes.gpu_names import AmbiguousGpu, GpuMatch
from gpuenv.recipes.kb import KnowledgeBase
from gpuenv.recipes.model import GpuRecord


class TargetError(GpuenvError, ValueError):
    """The GPU (or the target it decides) cannot be identified as given: exit 2."""

    exit_code = USAGE_EXIT


# Compiled on first use (re caches it): a GPU described by its compute capability never needs it.
_PCI_TEXT = r"^(?:(?:0x)?10de:)?(?:0x)?([0-9a-f]{4})$"
_BARE_HEX = r"^[0-9a-f]{4}$"
# Longer than any GPU name NVIDIA sells (the longest known is under 60 characters): a longer
# text is a paste gone wrong, refused before the name index is searched.
MAX_GPU_TEXT = 200
# The source of a GPU described with --gpu: its name is what the person typed, read as typed.
DESCRIBED_GPU_SOURCE = "described (--gpu), compute capability from knowledge base"


def lookup_gpu(
    kb: KnowledgeBase, name: str, pci_id: Optional[str] = None, *, typed: bool = False
) -> GpuRecord:
    """A GPU record by PCI id or name (a name may also be a PCI id: "10de:1380"), or a
    TargetError that says how to go on. `typed`: a name a person wrote (--gpu, a lab file),
    which may leave out brand words or be part of a name ("RTX 3090", "A100"); detected names
    are read strictly."""
    if typed and len(name) > MAX_GPU_TEXT:
        raise TargetError(
            f"GPU name of {len(name)} characters: longer than any NVIDIA GPU's name; pass its"
            " name as `nvidia-smi --query-gpu=name --format=csv` prints it, or its compute"
            " capability (e.g. --gpu 6.1)"
        )
    try:
        as_pci = _pci_reading(kb, name, typed) if pci_id is None else None
        if as_pci:
            record = kb.find_gpu(pci_id=as_pci)
            if record is None:
                raise TargetError(
                    f"unknown PCI id {name!r}: no NVIDIA GPU in gpuenv's knowledge base has"
                    " device id " + as_pci + "; pass its compute capability instead"
                    " (e.g. --gpu 6.1; NVIDIA lists them at https://developer.nvidia.com/cuda-gpus)"
                )
        elif typed:
            match = kb.match_typed_gpu(name)
            record = match.record if match else None
        else:
            record = kb.find_gpu(name=name, pci_id=pci_id)
    except AmbiguousGpu as exc:
        raise TargetError(str(exc)) from None
    if record is None:
        close = kb.close_gpu_names(name) if typed else []
        raise TargetError(
            f"unknown GPU {name!r}: gpuenv's knowledge base has no such NVIDIA GPU"
            + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else "")
            + ". Pass its compute capability instead (e.g. --gpu 6.1; NVIDIA lists them at"
            " https://developer.nvidia.com/cuda-gpus), or check the spelling"
            " (`nvidia-smi --query-gpu=name --format=csv` prints it)."
        )
    return record


def _pci_reading(kb: KnowledgeBase, text: str, typed: bool) -> Optional[str]:
    """The PCI device id a text stands for, or None when it is a name. "10de:1380" and
    "0x1380" are ids; four bare hex digits are one only when no GPU is typed so: people type
    model numbers ("A100", "1080") far more often than bare device ids, which nvidia-smi and
    lspci print with their "10de:"/"0x" prefix."""
    as_pci = re.match(_PCI_TEXT, text.strip().lower())
    if as_pci is None:
        return None
    if typed and re.match(_BARE_HEX, text.strip().lower()) and kb.match_typed_gpu(text):
        return None
    return as_pci.group(1)


def described_pci_id(kb: KnowledgeBase, text: str, record: GpuRecord) -> Optional[str]:
    """The PCI id a `--gpu` text pins down: the one typed, or the row's when the name means one
    chip only; None when the name was read as one of several chips or GPUs (the plan says so)."""
    as_pci = _pci_reading(kb, text, typed=True)
    if as_pci:
        return f"10de:{as_pci}"
    match = kb.match_typed_gpu(text)
    if match is None or match.unconfirmed or match.alternatives or not record.pci_ids:
        return None
    return f"10de:{record.pci_ids[0]}"


def cc_only_name(cc: Optional[str]) -> str:
    """The name of a GPU described by its compute capability alone (`--gpu 8.6`)."""
    return f"GPU with compute capability {cc}"


def gpu_identity_warnings(kb: KnowledgeBase, gpu: Gpu) -> list[str]:
    """When a GPU known only by name was taken for the chip NVIDIA's tables confirm, say which
    other chips carry that name and how to plan for one of them instead."""
    if gpu.pci_id or not gpu.name or gpu.name == cc_only_name(gpu.compute_capability):
        return []
    try:
        if gpu.source == DESCRIBED_GPU_SOURCE:  # typed: "A100" may name several GPUs
            match = kb.match_typed_gpu(gpu.name)
        else:
            match = kb.match_gpu(name=gpu.name)
    except AmbiguousGpu:
        return []
    if match is not None and match.alternatives:
        return [_alternatives_warning(gpu.name, match)]
    if match is None or not match.unconfirmed:
        return []
    chosen = match.record
    others = "; ".join(
        f"{o.chip} {o.kind}, compute capability {o.compute_capability}"
        f" (PCI {', '.join('10de:' + p for p in o.pci_ids)})"
        for o in match.unconfirmed
    )
    flags = ", ".join(
        dict.fromkeys(
            f"--gpu {o.compute_capability} or --gpu 10de:{o.pci_ids[0]}"
            for o in match.unconfirmed
            if o.pci_ids
        )
    )
    return [
        f"{gpu.name!r} was planned as the {chosen.chip} (compute capability"
        f" {chosen.compute_capability}), the chip NVIDIA's name tables list under that name;"
        f" other boards sold under it: {others}, which NVIDIA's tables do not list. If yours is"
        f" one of them, plan with {flags} (`nvidia-smi --query-gpu=pci.device_id --format=csv`"
        " prints the PCI id)"
    ]


def _alternatives_warning(text: str, match: GpuMatch) -> str:
    names = [match.record.name, *(a.name for a in match.alternatives)]
    shown = ", ".join(names[:_SHOWN]) + (
        f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    )
    return (
        f"{text!r} names {len(names)} GPUs in gpuenv's knowledge base ({shown}), all of compute"
        f" capability {match.record.compute_capability}: the plan holds for each of them;"
        " pass the full name to plan for one"
    )


_SHOWN = 8  # names a warning lists
