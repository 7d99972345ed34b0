"""`gpuenv doctor` as a user runs it, on this machine (no NVIDIA GPU here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpuenv.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["GPUENV_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=REPO,
    )


def test_doctor_is_registered() -> None:
    assert COMMANDS["doctor"] == "gpuenv.commands.doctor:doctor_command"


def test_doctor_json_no_verify_on_this_machine(tmp_path: Path) -> None:
    result = run("--json", "--no-verify", home=tmp_path)
    assert "Traceback" not in result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == 1 and data["environments"] == []
    if not data["machine"]["gpus"]:  # this machine: no NVIDIA GPU, which is a warning only
        codes = {f["code"] for f in data["machine_findings"]}
        assert "no-gpu" in codes
        assert any("no NVIDIA GPU" in f["what"] for f in data["machine_findings"])
        assert result.returncode == 0  # no environments, nothing broken: no GPU is not a problem
    assert result.returncode == (0 if data["ok"] else 1)
    assert data["ok"] == (not data["problems"])


def test_doctor_text_and_faq(tmp_path: Path) -> None:
    text = run("--no-verify", home=tmp_path)
    assert "Traceback" not in text.stderr
    assert text.stdout.startswith("Machine") and "gpuenv doctor --faq" in text.stdout
    faq = run("--faq", home=tmp_path)
    assert faq.returncode == 0 and "tensorflow-gpu" in faq.stdout
    faq_json = json.loads(run("--faq", "--json", home=tmp_path).stdout)
    assert all(entry["sources"] for entry in faq_json)


def test_doctor_verifies_a_stored_environment(tmp_path: Path) -> None:
    """A store entry whose plan promises torch that is not installed: verify's problem shows."""
    from gpuenv.envs.store import write_metadata
    from gpuenv.machine.describe import describe_machine
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.resolve import resolve

    kb = load_knowledge_base()
    plan = resolve(
        describe_machine(kb, gpu=None, driver=None, os_name="linux", arch=None), ["torch"], kb=kb
    )
    version = tmp_path / "envs" / ".versions" / "broken-0123456789ab"
    uv = Path(sys.executable).parent / "uv"
    subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(version)], check=True)
    write_metadata(
        version,
        {
            "platform": plan.platform,
            "python": plan.python,
            "accelerator": plan.accelerator,
            "stack": {"torch": "x"},
            "plan": plan.to_json(with_rejected=False),
        },
    )
    (tmp_path / "envs" / "broken").symlink_to(version, target_is_directory=True)
    result = run("--json", "--timeout", "60", home=tmp_path)
    assert "Traceback" not in result.stderr
    data = json.loads(result.stdout)
    [env] = data["environments"]
    assert env["name"] == "broken" and env["verified"]
    assert result.returncode == 1 and not data["ok"]
    assert any("torch" in f["what"] for f in data["problems"])
