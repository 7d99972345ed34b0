"""Command-line inputs that used to be silently ignored or guessed at: each is refused (exit 2)
with a message naming the flag, or honoured. Run as a user runs gpuenv: a separate process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.resolve.requirements import RequirementError, parse_requirements


def gpuenv(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, "GPUENV_HOME": str(cwd / "home"), "GPUENV_CACHE_DIR": str(cwd / "c")},
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["resolve", "torch", "--gpu", ""], "--gpu is empty"),
        (["resolve", "torch", "--gpu", "   "], "--gpu is empty"),
        (["resolve", "torch", "--gpu", "6.1", "--driver", ""], "--driver is empty"),
        (["resolve", "torch", "--gpu", "6.1", "--driver", "abc"], "not an NVIDIA driver version"),
        (["resolve", "torch", "--gpu", "6.1\n"], "--gpu '6.1\\n' contains a control character"),
        (["resolve", "torch", "--gpu", "GeForce 940M\n"], "contains a control character"),
        (["resolve", "torch", "--gpu", "6.1", "--driver", "535.183.01\r"], "control character"),
        (["resolve", "torch", "--arch", ""], "--arch is empty"),
        (["resolve", "torch", "--python", "3.x"], "'3.x': expected a Python version"),
        (["resolve", "torch", "--python", "3"], "expected a Python version"),
        (["resolve", "torch", "--python", "3.11.x"], "expected a Python version"),
        (["resolve", "torch", "--python", "/usr/bin/python3"], "expected a Python version"),
        (["resolve", "torch\n"], "contains a control character"),
        (["resolve", 'torch; sys_platform=="linux"'], "environment marker"),
        (["resolve", "jax[../x]"], "bad extra"),
        (["resolve", "jax[tpu]"], "extra"),
        (["explain", "torch", "--gpu", ""], "--gpu is empty"),
        (["lock", "torch", "--class", "pascal"], "--class picks classes of a lab file"),
        (["lock", "torch", "--gpu", "", "-o", "x.lock.yml"], "--gpu is empty"),
        (["lock", "torch", "--python", "3.x", "-o", "x.lock.yml"], "expected a Python version"),
    ],
)
def test_refused_with_exit_2(args: list[str], expected: str, tmp_path: Path) -> None:
    result = gpuenv(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.lock.yml").exists()


@pytest.mark.parametrize(
    "flags",
    [
        ["--arch", "aarch64"],
        ["--python", "3.11"],
        ["--no-gpu"],
        ["-o", "elsewhere.lock.yml"],
        ["--exclude-newer", "none"],
        ["--gpu", "8.6"],
    ],
)
def test_lock_lab_refuses_flags_it_would_ignore(flags: list[str], tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[stack]\nrequirements = ["jax"]\n[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'
    )
    result = gpuenv("lock", "--lab", str(lab), *flags, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "cannot be given with it" in result.stderr and flags[0] in result.stderr
    assert not (tmp_path / "lockfiles").exists() and not (tmp_path / "elsewhere.lock.yml").exists()


def test_lock_lab_refuses_requirements(tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[stack]\nrequirements = ["jax"]\n[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'
    )
    result = gpuenv("lock", "--lab", str(lab), "torch", cwd=tmp_path)
    assert result.returncode == 2 and "REQUIREMENTS" in result.stderr


def test_an_unknown_class_is_named(tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[stack]\nrequirements = ["jax"]\n[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'
    )
    result = gpuenv("lock", "--lab", str(lab), "--class", "gpu", "--check", cwd=tmp_path)
    assert result.returncode == 2 and "no class 'gpu'" in result.stderr and "cpu" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["resolve", "torch", "--gpu", "6.1", "--driver", "535.183.01"],
        ["resolve", "torch", "--gpu", " 6.1 ", "--python", "3.10.4"],  # honoured: spaces, X.Y.Z
    ],
)
def test_good_flags_still_work(args: list[str], tmp_path: Path) -> None:
    result = gpuenv(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "torch" in result.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("torch ; python_version >= '3.10'", "environment marker"),
        ("jax[a b]", "bad extra"),
        ("tor\x00ch", "control character"),
        ("torch\t>=2", "control character"),
    ],
)
def test_framework_requirements_refuse_what_the_resolver_drops(text: str, expected: str) -> None:
    with pytest.raises(RequirementError, match=expected):
        parse_requirements([text])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"[]", "a Machine is a JSON object"),
        (b"{nope", "not valid JSON"),
        (b" " * ((1 << 20) + 1), "larger than"),
    ],
)
def test_bad_machine_files(content: bytes, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    result = gpuenv("resolve", "torch", "--machine", str(path), cwd=tmp_path)
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_machine_fifo_or_device_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    for path in (str(fifo), os.devnull):
        result = gpuenv("resolve", "torch", "--machine", path, cwd=tmp_path)
        assert result.returncode == 2 and "not a regular file" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [(["torch"], "REQUIREMENTS"), (["--gpu", "6.1"], "--gpu"), (["--python", "3.11"], "--python")],
)
def test_lock_plan_refuses_what_the_plan_decides(
    args: list[str], named: str, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    result = gpuenv("lock", "--plan", str(plan), *args, "-o", "x.lock.yml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "--plan names the stack and the machine" in result.stderr and named in result.stderr
    assert not (tmp_path / "x.lock.yml").exists()
