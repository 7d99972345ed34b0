"""The whole check on a GPU-shaped machine (fake nvidia-smi, NVML and driver library): what it
records, what it compares, what promote makes of it."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from fake_gpu import fake_gpu_env

from gpuenv.gpucheck import record
from gpuenv.gpucheck.__main__ import main
from gpuenv.gpucheck.promote import PromoteError, promote, read_recording, replay
from gpuenv.gpucheck.run import Result, run_check
from gpuenv.gpucheck.summary import render

UV = Path(sys.executable).parent / "uv"


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Result:
    tmp = tmp_path_factory.mktemp("fakegpu")
    env = fake_gpu_env(tmp / "env")
    # an interpreter whose "jax" is broken: verify must run against it and say so
    venv = tmp / "venv"
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    (site / "jax").mkdir()
    (site / "jax" / "__init__.py").write_text("raise ImportError('planted: broken jax')\n")
    # an empty root: no real /proc or /sys leaks in, also on a machine with a real GPU
    (tmp / "root").mkdir()
    return run_check(
        tmp / "out",
        environ=env,
        root=tmp / "root",
        pythons=[str(venv / "bin" / "python")],
        discover=False,
    )


def test_records_every_source_in_fixture_format(checked: Result) -> None:
    fixture = checked.out / "fixture"
    names = {p.name for p in fixture.iterdir()}
    assert names >= {
        "nvml.json",
        "nvidia-smi.query.csv",
        "nvidia-smi.q.txt",
        "nvidia-smi.q.xml",
        "machine.json",
        "machine.nvml-off.json",
        "recording.json",
        "SOURCE",
    }
    nvml = json.loads((fixture / "nvml.json").read_text())
    assert nvml["driver"] == "535.86.05" and nvml["cuda"] == 12020
    assert [g["cc"] for g in nvml["gpus"]] == ["8.9", "6.1"]
    assert "NVIDIA GeForce GTX 1080" in (fixture / "nvidia-smi.query.csv").read_text()
    meta = json.loads((fixture / "recording.json").read_text())
    assert meta["commands"]["nvidia-smi.q.xml"]["argv"] == ["nvidia-smi", "-q", "-x"]
    assert meta["query_fields"][-1] == "compute_cap"
    source = (fixture / "SOURCE").read_text()
    assert "NVIDIA GeForce RTX 4090 (10de:2684, cc 8.9)" in source
    assert "driver: 535.86.05 (CUDA 12.2)" in source


def test_serials_and_uuids_never_reach_the_recording(checked: Result) -> None:
    for path in (checked.out / "fixture").iterdir():
        text = path.read_text()
        assert "1324020012345" not in text and "GPU-1b2c3d4e" not in text, path.name
    assert "<serial>REDACTED</serial>" in (checked.out / "fixture" / "nvidia-smi.q.xml").read_text()


def test_the_planted_disagreement_and_only_it_is_reported(checked: Result) -> None:
    differ = [f for f in checked.findings if f.problem]
    assert [f.topic for f in differ] == ["GPU 1 compute capability"]
    assert differ[0].values["nvidia-smi"] == "6.0" and differ[0].values["NVML"] == "6.1"
    assert differ[0].values["knowledge base (PCI id)"] == "6.1"
    topics = {f.topic: f for f in checked.findings}
    assert topics["driver version"].status == "agree"
    assert set(topics["driver version"].values) >= {"NVML", "nvidia-smi", "gpuenv detect"}
    # the driver's CUDA version, as NVML, nvidia-smi -q, -q -x and the toolkit table see it
    assert topics["driver's CUDA version"].values["nvidia-smi -q -x"] == "12.2"
    assert topics["driver's CUDA version vs knowledge base"].status == "agree"
    # the extra NVML answers: architecture, against the knowledge base's row for the PCI id
    assert topics["GPU 0 architecture"].values == {
        "NVML": "Ada Lovelace",
        "knowledge base (PCI id)": "Ada Lovelace",
    }
    assert topics["GPU 1 architecture"].status == "agree"
    extra = json.loads((checked.out / "fixture" / "nvml-extra.json").read_text())
    assert [g["architecture"] for g in extra["gpus"]] == ["ADA", "PASCAL"]
    assert any("multiprocessors" in e for e in extra["errors"])  # the fake has no such answer
    assert topics["GPU 0 PCI id"].values == {
        "NVML": "10de:2684",
        "nvidia-smi": "10de:2684",
        "nvidia-smi -q -x": "10de:2684",
        "gpuenv detect": "10de:2684",
        "gpuenv detect, NVML off": "10de:2684",
    }


def test_plans_for_the_machine_use_its_gpu(checked: Result) -> None:
    for fw in ("torch", "tensorflow", "jax"):
        plan = json.loads((checked.out / "plans" / f"{fw}.json").read_text())
        assert plan["accelerator"] == "cuda", fw
        assert plan["gpu"]["compute_capability"] == "6.1", fw  # the lowest CC plans


def test_verify_ran_on_the_interpreter_with_a_framework(checked: Result) -> None:
    ((interp, report),) = checked.verified
    assert interp.frameworks == ("jax",)
    assert report is not None and report["ok"] is False
    assert report["accelerator"] == "cuda"  # the check expects the GPU to be used
    expect = json.loads((checked.out / "verify" / "expect-0.json").read_text())
    assert expect["frameworks"] == {"jax": {"gpu": True}} and expect["gpu_cc"] == "8.9"
    assert any("gpuenv verify --python" in p for p in checked.problems)


def test_summary_fits_one_screen_and_names_what_differs(checked: Result) -> None:
    text = render(checked)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 100
    assert any(line.startswith("DIFFER:   GPU 1 compute capability") for line in lines)
    assert "jax ? FAILED" in text
    assert checked.exit_status == 1


def test_promote_then_replay_agrees(checked: Result, tmp_path: Path) -> None:
    target = promote(checked.out, "fake-535.86.05", tmp_path, note="fake machine for tests")
    assert target == tmp_path / "fake-535.86.05"
    assert "note: fake machine for tests" in (target / "SOURCE").read_text()
    assert replay(target) == []
    # a parser change that reads the recording differently is caught
    nvml = json.loads((target / "nvml.json").read_text())
    nvml["gpus"][0]["name"] = "NVIDIA GeForce RTX 4080"
    (target / "nvml.json").write_text(json.dumps(nvml))
    assert replay(target) == [
        "NVML: GPU 0 name 'NVIDIA GeForce RTX 4080', detect said 'NVIDIA GeForce RTX 4090'"
    ]


def test_promote_from_the_archive(checked: Result, tmp_path: Path) -> None:
    archive = tmp_path / "gpu-check.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for p in (checked.out / "fixture").iterdir():
            tar.add(p, arcname=f"fixture/{p.name}")
    files = read_recording(archive)
    assert set(files) == {p.name for p in (checked.out / "fixture").iterdir()}


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "UPPER", ".hidden", "x" * 80])
def test_promote_refuses_names_that_are_not_plain(
    checked: Result, tmp_path: Path, name: str
) -> None:
    with pytest.raises(PromoteError, match="plain folder name"):
        promote(checked.out, name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_promote_refuses_a_linked_recording_file(checked: Result, tmp_path: Path) -> None:
    src = tmp_path / "src" / "fixture"
    src.mkdir(parents=True)
    for p in (checked.out / "fixture").iterdir():
        (src / p.name).write_bytes(p.read_bytes())
    (src / "nvml.json").unlink()
    (src / "nvml.json").symlink_to("/etc/passwd")
    dest = tmp_path / "fixtures"
    dest.mkdir()
    with pytest.raises(PromoteError, match="not a regular file"):
        promote(tmp_path / "src", "x", dest)
    assert list(dest.iterdir()) == []


def test_promote_ignores_archive_members_outside_the_recording(
    checked: Result, tmp_path: Path
) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(checked.out / "fixture" / "recording.json", arcname="fixture/recording.json")
        tar.add(checked.out / "fixture" / "nvml.json", arcname="../../nvml.json")
        tar.add(checked.out / "fixture" / "SOURCE", arcname="fixture/../../SOURCE")
    assert set(read_recording(archive)) == {"recording.json"}


def test_promote_never_overwrites_without_force(checked: Result, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep").write_text("x")
    with pytest.raises(PromoteError, match="--force"):
        promote(checked.out, "taken", tmp_path)
    assert (tmp_path / "taken" / "keep").exists()
    promote(checked.out, "taken", tmp_path, force=True)
    assert not (tmp_path / "taken" / "keep").exists()


def test_promote_of_a_folder_without_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["promote", str(tmp_path / "empty"), "x", "--fixtures", str(tmp_path)]) == 2
    assert "not a GPU recording" in capsys.readouterr().err


def test_recording_constants_are_the_promoted_names() -> None:
    from gpuenv.gpucheck.promote import KNOWN

    assert {record.NVML_JSON, record.SMI_QUERY, record.SMI_XML, record.LINUX_JSON} <= KNOWN


def test_without_nvidia_ml_py_nvml_is_skipped_and_said_the_rest_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many images lack the NVML binding: the check must still record and compare the rest."""
    import importlib.util

    env = fake_gpu_env(tmp_path / "env")
    (tmp_path / "root").mkdir()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        record.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "pynvml" else real(name, *a),
    )
    result = run_check(
        tmp_path / "out", environ=env, root=tmp_path / "root", pythons=[], discover=False
    )
    names = {p.name for p in (result.out / "fixture").iterdir()}
    assert "nvml.json" not in names and "nvidia-smi.query.csv" in names
    meta = json.loads((result.out / "fixture" / "recording.json").read_text())
    assert any("lacks nvidia-ml-py" in note for note in meta["notes"])
