"""compare: each source parsed by gpuenv's parsers, every fact side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest
from detect_fakes import FIXTURES, SMI

from gpuenv.gpucheck import compare, record
from gpuenv.machine import Gpu


def test_xml_view_reads_driver_cuda_and_names_of_a_real_output() -> None:
    files = {record.SMI_XML: (SMI / "rtx4090-535.86.05.q.xml").read_text()}
    view = compare.smi_xml_view(files)
    assert (view.driver, view.cuda) == ("535.86.05", "12.2")
    assert [g.name for g in view.gpus] == ["NVIDIA GeForce RTX 4090"]


def test_xml_view_of_garbage_is_an_error_not_a_crash() -> None:
    view = compare.smi_xml_view({record.SMI_XML: "<nvidia_smi_log><gpu>"})
    assert view.error is not None and view.error.startswith("not XML")


def test_smi_view_of_an_old_driver_without_compute_cap() -> None:
    files = {
        record.SMI_QUERY: (SMI / "gtx780-450.66.query.csv").read_text(),
        record.SMI_Q: (SMI / "gtx780-450.66.q.txt").read_text(),
    }
    fields = ("index", "name", "pci.device_id", "memory.total", "driver_version")
    view = compare.smi_view(files, fields)
    assert (view.driver, view.cuda) == ("450.66", "11.0")
    assert view.gpus[0].compute_capability is None


def test_smi_view_of_the_banner_table_is_an_error() -> None:
    files = {record.SMI_QUERY: (SMI / "banner-gtx680.txt").read_text()}
    assert compare.smi_view(files, ("index", "name")).error is not None


def _fake_root(root: Path) -> None:
    (root / "proc/driver/nvidia/gpus/0000:01:00.0").mkdir(parents=True)
    (root / "proc/driver/nvidia/version").write_text(
        (FIXTURES / "proc" / "nvidia-version-565.57.01-open.txt").read_text()
    )
    (root / "proc/driver/nvidia/gpus/0000:01:00.0/information").write_text(
        "Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t 180\n"
        "GPU UUID: \t GPU-1b2c3d4e-0000-1111-2222-333344445555\nBus Location: \t 0000:01:00.0\n"
    )
    dev = root / "sys/bus/pci/devices/0000:01:00.0"
    dev.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("device", "0x2684"), ("class", "0x030000")):
        (dev / name).write_text(value + "\n")
    other = root / "sys/bus/pci/devices/0000:00:02.0"  # an Intel GPU beside it
    other.mkdir(parents=True)
    for name, value in (("vendor", "0x8086"), ("device", "0x9bc4"), ("class", "0x030000")):
        (other / name).write_text(value + "\n")


def test_linux_sources_recorded_redacted_and_read_back(tmp_path: Path) -> None:
    _fake_root(tmp_path)
    rec = record.Recording()
    record.record_linux(rec, tmp_path)
    data = json.loads(rec.files[record.LINUX_JSON])
    assert data["pci"] == [{"slot": "0000:01:00.0", "pci_id": "10de:2684"}]
    info = data["proc_gpus_information"]["0000:01:00.0"]
    assert "GPU-1b2c3d4e" not in info and "REDACTED" in info
    view = compare.linux_view(rec.files)
    assert view.driver == "565.57.01"
    assert [(g.name, g.pci_id) for g in view.gpus] == [("NVIDIA GeForce RTX 4090", "10de:2684")]


def test_linux_sources_absent_say_so(tmp_path: Path) -> None:
    rec = record.Recording()
    record.record_linux(rec, tmp_path)
    assert rec.files == {} and not rec.anything
    assert "/proc/driver/nvidia/version: absent" in rec.notes


def _kb(cc: Optional[str], arch: str = "Hopper") -> compare.KbGpu:
    return lambda key: compare.KbRow(cc, "kb name", arch) if cc else None


def _view(source: str, cc: Optional[str], driver: str = "580.159.03") -> compare.View:
    gpu = Gpu("NVIDIA H200", cc, 143771, "10de:2335", source)
    return compare.View(source, driver, "13.0", (gpu,))


def test_all_agree() -> None:
    found = compare.compare(
        [_view("NVML", "9.0"), _view("nvidia-smi", "9.0")],
        kb_by_pci=_kb("9.0"),
        kb_cuda=lambda driver: "13.0",
    )
    assert [f.topic for f in found if f.status != "agree"] == []
    assert len(found) == 8


def test_knowledge_base_that_disagrees_or_does_not_know() -> None:
    found = {
        f.topic: f
        for f in compare.compare(
            [_view("NVML", "9.0")],
            kb_by_pci=_kb("8.0"),
            kb_by_name=_kb(None),
            kb_cuda=lambda driver: "12.9",
        )
    }
    cc = found["GPU 0 compute capability"]
    assert cc.status == "differ" and cc.values["knowledge base (PCI id)"] == "8.0"
    assert "name 'NVIDIA H200' is not in recipes/gpus.toml" in cc.note
    assert found["driver's CUDA version vs knowledge base"].status == "differ"


def test_sources_that_failed_are_left_out_not_counted() -> None:
    broken = compare.View("NVML", error="nvmlInit failed")
    found = compare.compare([broken, _view("nvidia-smi", "9.0", driver="550.54.15")])
    assert {f.status for f in found} == {"agree"}
    assert found[0].values == {"nvidia-smi": "550.54.15"}


def test_driver_versions_that_differ() -> None:
    found = compare.compare([_view("NVML", "9.0"), _view("/proc+/sys", None, driver="580.95")])
    assert found[0].status == "differ"
    assert found[0].line() == "driver version: DIFFER: NVML 580.159.03, /proc+/sys 580.95"


def test_nothing_known_is_unknown_not_agree() -> None:
    found = compare.compare([compare.View("NVML", gpus=(Gpu("X", None),))])
    cc = next(f for f in found if f.topic == "GPU 0 compute capability")
    assert cc.status == "unknown" and not cc.problem


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "Expecting value"),
        ('{"fatal": "nvmlInit failed: Driver Not Loaded"}', "Driver Not Loaded"),
        ("[1, 2]", "not a report"),
        ('{"gpus": [{"index": 0}]}', "'name'"),
    ],
)
def test_nvml_answers_that_are_not_a_report_are_errors(text: str, message: str) -> None:
    view = compare.nvml_view({record.NVML_JSON: text})
    assert view.error is not None and message in view.error and view.gpus == ()


def test_architecture_from_nvml_against_the_knowledge_base() -> None:
    files = {record.NVML_EXTRA_JSON: json.dumps({"gpus": [{"index": 0, "architecture": "HOPPER"}]})}
    archs = compare.nvml_architectures(files)
    assert archs == {0: "Hopper"}
    same = compare.compare([_view("NVML", "9.0")], kb_by_pci=_kb("9.0"), architectures=archs)
    assert next(f for f in same if f.topic == "GPU 0 architecture").status == "agree"
    other = compare.compare(
        [_view("NVML", "9.0")], kb_by_pci=_kb("9.0", "Ada Lovelace"), architectures=archs
    )
    found = next(f for f in other if f.topic == "GPU 0 architecture")
    assert found.problem and found.values["knowledge base (PCI id)"] == "Ada Lovelace"
    assert compare.nvml_architectures({record.NVML_EXTRA_JSON: "garbage"}) == {}


def test_redaction_covers_every_serial_and_uuid() -> None:
    xml = (
        "<gpu><serial>1324</serial><uuid>GPU-ab</uuid><product_name>NVIDIA H200</product_name>"
        "<platformInfo><chassis_serial_number>C-99</chassis_serial_number></platformInfo>"
        "<mig_device><device_uuid>MIG-1</device_uuid></mig_device></gpu>"
    )
    out = record.redact(xml)
    assert "1324" not in out and "GPU-ab" not in out and "C-99" not in out and "MIG-1" not in out
    assert "<product_name>NVIDIA H200</product_name>" in out
    text = "    Serial Number : 1324\n    GPU UUID : GPU-ab\n    Chassis Serial Number : C-9\n"
    text += "    Product Name : NVIDIA H200\n"
    out = record.redact(text)
    assert "1324" not in out and "GPU-ab" not in out and "C-9" not in out
    assert "Product Name : NVIDIA H200" in out
