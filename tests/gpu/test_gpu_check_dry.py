"""scripts/gpu-check.sh on this machine: no GPU here, so it must say so and exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from gpu_here import HAS_GPU

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-check.sh"
UV = Path(sys.executable).parent / "uv"


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = dict(os.environ if env is None else env)
    base.setdefault("PYTHON", sys.executable)
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=base, timeout=300
    )


@pytest.mark.skipif(HAS_GPU, reason="this machine has an NVIDIA GPU: see test_real_gpu.py")
def test_no_gpu_says_so_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = run_script("--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "no NVIDIA GPU or driver on this machine, nothing recorded" in res.stdout
    assert "Result:   no GPU here" in res.stdout
    assert "Traceback" not in res.stderr
    assert len(res.stdout.splitlines()) <= 24  # one screen
    report = json.loads((out / "report.json").read_text())
    assert report["has_gpu"] is False and report["exit_status"] == 0
    assert (out / "summary.txt").read_text() == res.stdout
    # nothing recorded, but detect, resolve (for the detected machine) ran and were saved
    assert not (out / "fixture").exists()
    machine = json.loads((out / "machine.json").read_text())
    assert machine["gpus"] == [] and machine["driver"] is None
    for fw in ("torch", "tensorflow", "jax"):
        plan = json.loads((out / "plans" / f"{fw}.json").read_text())
        assert plan["accelerator"] == "cpu" and fw in plan["frameworks"]
    assert {s["name"] for s in report["steps"]} >= {"gpuenv detect", "gpuenv resolve jax"}
    assert all(s["returncode"] == 0 for s in report["steps"])


@pytest.mark.skipif(HAS_GPU, reason="this machine has an NVIDIA GPU")
def test_archive_leaves_few_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = run_script("--out", str(out), "--archive")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "gpu-check.tar.gz",
        "machine.json",
        "report.json",
        "summary.txt",
    ]
    import tarfile

    with tarfile.open(out / "gpu-check.tar.gz") as tar:
        names = tar.getnames()
    assert "plans/torch.json" in names and "report.json" in names


def test_output_that_is_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("mine")
    res = run_script("--out", str(out))
    assert res.returncode == 2
    assert "is not a folder" in res.stderr and "Traceback" not in res.stderr
    assert out.read_text() == "mine"


def test_output_link_is_refused_and_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "out").symlink_to(target)
    res = run_script("--out", str(tmp_path / "out"))
    assert res.returncode == 2 and "is not a folder" in res.stderr
    assert list(target.iterdir()) == []


def test_report_json_link_is_replaced_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / "report.json").symlink_to(victim)
    res = run_script("--out", str(out), "--budget", "30")  # short also where a GPU is
    assert res.returncode in (0, 1), res.stderr
    assert victim.read_text() == "keep"
    assert not (out / "report.json").is_symlink()


def test_budget_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    res = run_script("--out", str(tmp_path / "o"), "--budget", "5000")
    assert res.returncode == 2 and "--budget" in res.stderr


def _bare_python(tmp_path: Path) -> Path:
    venv = tmp_path / "bare"
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    return venv / "bin" / "python"


def test_python_without_the_dependencies_is_told_what_to_do(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHON=str(_bare_python(tmp_path)), GPU_CHECK_DIR=str(tmp_path / "c"))
    res = run_script("--out", str(tmp_path / "o"), env=env)
    assert res.returncode == 2
    assert "lacks: click packaging" in res.stderr  # nvidia-ml-py is optional
    assert "--prepare" in res.stderr and "Traceback" not in res.stderr


def _wheel_of(dist: str, folder: Path) -> None:
    """A pure wheel of an installed distribution (its files as installed): what --prepare
    downloads, made here without a network."""
    from importlib import metadata

    d = metadata.distribution(dist)
    name = d.metadata["Name"].replace("-", "_")
    with zipfile.ZipFile(folder / f"{name}-{d.version}-py3-none-any.whl", "w") as zf:
        for f in d.files or []:
            if f.suffix != ".pyc" and not str(f).startswith(".."):
                zf.write(d.locate_file(f), str(f))


@pytest.mark.skipif(HAS_GPU, reason="this machine has an NVIDIA GPU")
def test_bare_python_runs_from_carried_wheels_offline(tmp_path: Path) -> None:
    wheels = tmp_path / "c" / "wheels"
    wheels.mkdir(parents=True)
    for dist in ("click", "packaging", "nvidia-ml-py"):  # no platformdirs: not needed
        _wheel_of(dist, wheels)
    env = dict(os.environ, PYTHON=str(_bare_python(tmp_path)), GPU_CHECK_DIR=str(tmp_path / "c"))
    env["UV_OFFLINE"] = "1"
    env["PIP_NO_INDEX"] = "1"
    res = run_script("--out", str(tmp_path / "o"), env=env)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "c" / "site" / "click").is_dir()
    assert json.loads((tmp_path / "o" / "plans" / "torch.json").read_text())["frameworks"]


def test_missing_python_is_a_clear_error(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHON=str(tmp_path / "no-such-python"))
    res = run_script(env=env)
    assert res.returncode == 2 and "not found; set PYTHON" in res.stderr


def test_a_full_disk_is_one_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from gpuenv.gpucheck.__main__ import main

    real = Path.write_text

    def full(self: Path, *args: object, **kwargs: object) -> int:
        if self.name in ("summary.txt", "report.json"):
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", full)
    assert main(["run", "--out", str(tmp_path / "o"), "--budget", "60"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err
