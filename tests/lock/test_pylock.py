"""PEP 751 files: names, the reader's refusals (the file is untrusted), the CLI's choices."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuenv.cli import cli
from gpuenv.lock.errors import LockError, LockfileError
from gpuenv.lock.load import load_locked
from gpuenv.lock.names import LockNameError, check_output, default_output, is_pylock_name
from gpuenv.lock.pylock.write import render_pylock
from gpuenv.lock.pypi import PipArtifact
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan

SHA = "ab" * 32
URL = "https://files.example/packages/jax-0.4.30-py3-none-any.whl"


def plan(platform: str = "linux-64", python: str = "3.12", conda: tuple[str, ...] = ()) -> Plan:
    return Plan(
        python=python,
        platform=platform,
        accelerator="cpu",
        glibc=None,
        gpu=None,
        driver=None,
        frameworks={"jax": FrameworkChoice("jax", "0.4.30", "cpu", None, None, "jax", None, False)},
        pip=(PipRequirement("jax==0.4.30"),),
        conda=conda,
        companions=(),
        constraints=(),
        exclude_newer=None,
        warnings=(),
        reasons=(),
        fixes=(),
        rejected=(),
        knowledge_base="test",
    )


def good_text(**tool: Any) -> str:
    art = PipArtifact("jax", "0.4.30", URL, SHA, None)
    uv = {
        "packages": [
            {
                "name": "jax",
                "version": "0.4.30",
                "index": "https://files.example/simple",
                "wheels": [{"url": URL, "size": 123, "hashes": {"sha256": SHA}}],
            }
        ]
    }
    meta = {"platform": "linux-64", "inputs-hash": "i" * 8, "intent-hash": "j" * 8, **tool}
    return render_pylock(plan(), [art], meta, uv_pylock=uv, header="# test\n")


def write(tmp_path: Path, text: str, name: str = "pylock.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("pylock.toml", True),
        ("pylock.gpu.toml", True),
        ("pylock.a.b.toml", False),
        ("pylock.toml.yml", False),
        ("gpuenv.lock.yml", False),
        ("my-pylock.toml", False),
    ],
)
def test_pylock_names_follow_pep_751(name: str, ok: bool) -> None:
    assert is_pylock_name(Path(name)) is ok


def test_default_names_and_refusals() -> None:
    assert default_output("pylock") == Path("pylock.toml")
    assert default_output("conda-lock") == Path("gpuenv.conda-lock.yml")
    with pytest.raises(LockNameError, match=r"pylock\.NAME\.toml"):
        check_output("pylock", Path("gpuenv.lock.yml"))  # never TOML in a .yml
    with pytest.raises(LockNameError, match="YAML"):
        check_output("conda-lock", Path("pylock.toml"))
    check_output("conda-lock", Path("old-name.lock.yml"))  # old names still written on request


def test_reader_returns_what_install_uses(tmp_path: Path) -> None:
    locked = load_locked(write(tmp_path, good_text(**{"machine-class": "lab-a"})))
    assert (locked.platform, locked.python, locked.conda) == ("linux-64", "3.12", ())
    ((entry),) = locked.pip
    assert (entry.name, entry.version, entry.url, entry.sha256) == ("jax", "0.4.30", URL, SHA)
    assert entry.filename == "jax-0.4.30-py3-none-any.whl"
    assert locked.inputs_hash == "i" * 8 and locked.intent_hash == "j" * 8
    assert locked.machine_class == "lab-a" and locked.plan.frameworks["jax"].version == "0.4.30"
    assert len(locked.content_sha256) == 64


def test_uv_fields_pass_through(tmp_path: Path) -> None:
    text = good_text()
    assert 'index = "https://files.example/simple"' in text and "size = 123" in text
    assert 'created-by = "gpuenv"' in text and 'requires-python = "==3.12.*"' in text


def _break(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


HOSTILE = {
    "escaping file name": (
        lambda t: t.replace("jax-0.4.30-py3-none-any.whl", "..%2F..%2Fjax-0.4.30-py3-none-any.whl"),
        "not a plain wheel file name|Invalid wheel filename",
    ),
    "wheel name not its URL": (
        lambda t: _break(
            t, 'name = "jax-0.4.30-py3-none-any.whl"', 'name = "jax-0.4.30-py3-none-win_amd64.whl"'
        ),
        "is not its URL's file",
    ),
    "no sha256": (lambda t: _break(t, f'sha256 = "{SHA}"', 'md5 = "00"'), "no sha256"),
    "short sha256": (lambda t: _break(t, SHA, "abc"), "sha256 is not 64 lowercase hex"),
    "an sdist": (
        lambda t: _break(
            t,
            "wheels = [",
            'sdist = { url = "https://x/jax-0.4.30.tar.gz", hashes = { sha256 = "'
            + SHA
            + '" } }\nwheels = [',
        ),
        "gpuenv installs wheels only",
    ),
    "no tool table": (lambda t: t.split("[tool.gpuenv]")[0], "not written by gpuenv"),
    "python that is a path": (
        lambda t: t.replace('\\"python\\": \\"3.12\\"', '\\"python\\": \\"../../bin/sh\\"'),
        "a Python is X.Y",
    ),
    "windows marker on a linux plan": (
        lambda t: _break(t, "sys_platform == 'linux'", "sys_platform == 'win32'"),
        "environments do not name",
    ),
    "requires-python off the plan": (
        lambda t: _break(t, 'requires-python = "==3.12.*"', 'requires-python = ">=3.8"'),
        "requires-python",
    ),
    "ftp url": (
        lambda t: t.replace("https://files.example/packages/", "ftp://x/"),
        r"scheme 'ftp' is not https, http or file",
    ),
    # the conda-lock reader's rules hold here too (one validator, gpuenv.lock.validate)
    "host-less url": (
        lambda t: t.replace("https://files.example/packages/", "https:///packages/"),
        "names no host",
    ),
    "a plan with no frameworks": (
        lambda t: re.sub(r'\\"frameworks\\": \{.*?\}\}, ', '\\"frameworks\\": {}, ', t, count=1),
        "frameworks is missing or empty",
    ),
    "an accelerator that is shell": (
        lambda t: t.replace(
            '\\"accelerator\\": \\"cpu\\"', '\\"accelerator\\": \\"rocm; rm -rf /\\"'
        ),
        "accelerator is 'rocm; rm -rf /'",
    ),
    "another project's wheel": (
        lambda t: t.replace("jax-0.4.30-py3", "numpy-0.4.30-py3"),
        "not consistent with package name",
    ),
    "lock version 2": (
        lambda t: _break(t, 'lock-version = "1.0"', 'lock-version = "2.0"'),
        "PEP 751",
    ),
    "not toml": (lambda t: "version: 1\nmetadata: {}\n", "not a TOML file"),
    "plan not json": (lambda t: t.replace('plan = "{', 'plan = "x{', 1), "plan is not JSON"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_reader_refuses_hostile_files(tmp_path: Path, case: str) -> None:
    mutate, message = HOSTILE[case]
    path = write(tmp_path, mutate(good_text()))
    with pytest.raises(LockfileError, match=message):
        load_locked(path)


@pytest.mark.parametrize(
    ("marker", "kept"),
    [("sys_platform == 'win32'", False), ("os_name == 'posix' and python_version == '3.12'", True)],
)
def test_a_package_marker_is_evaluated_for_the_lock_s_target(
    tmp_path: Path, marker: str, kept: bool
) -> None:
    """pip and uv skip a package whose marker fails on the target; so does install. The target
    is the lock's (linux-64, Python 3.12), not the machine reading it."""
    text = _break(good_text(), 'name = "jax"\n', f'name = "jax"\nmarker = "{marker}"\n')
    locked = load_locked(write(tmp_path, text))
    assert [p.name for p in locked.pip] == (["jax"] if kept else [])


def test_two_wheels_or_a_duplicate_package_are_refused(tmp_path: Path) -> None:
    text = good_text()
    block = text[text.index("[[packages]]") : text.index("[tool.gpuenv]")]
    with pytest.raises(LockfileError, match="listed twice"):
        load_locked(write(tmp_path, text.replace(block, block + block)))
    wheel = block[block.index("{ name") : block.rindex("]")]
    two = text.replace(wheel, wheel + ", " + wheel)
    with pytest.raises(LockfileError, match="exactly one wheel"):
        load_locked(write(tmp_path, two))


def test_devices_folders_and_binary_are_refused(tmp_path: Path) -> None:
    # reading through a link is harmless when it leads to a regular file; a link to a device or
    # a FIFO is refused by the same bounded read as the device itself (never blocked on)
    real = write(tmp_path, good_text(), "pylock.real.toml")
    (tmp_path / "pylock.toml").symlink_to(real)
    assert load_locked(tmp_path / "pylock.toml").plan.python
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "pylock.toml").symlink_to("/dev/zero")
    with pytest.raises(LockfileError, match="not a regular file"):
        load_locked(tmp_path / "z" / "pylock.toml")
    (tmp_path / "f").mkdir()
    os.mkfifo(tmp_path / "f" / "pylock.toml")
    with pytest.raises(LockfileError, match="not a regular file"):
        load_locked(tmp_path / "f" / "pylock.toml")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "pylock.toml").mkdir()
    with pytest.raises(LockfileError, match="not a regular file"):
        load_locked(tmp_path / "d" / "pylock.toml")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pylock.toml").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(LockfileError, match="not a TOML file"):
        load_locked(tmp_path / "b" / "pylock.toml")


def test_toml_under_another_name_is_not_given_to_the_yaml_reader(tmp_path: Path) -> None:
    with pytest.raises(LockfileError, match=r"pylock\.NAME\.toml"):
        load_locked(write(tmp_path, good_text(), "gpuenv.toml"))


def test_a_plan_with_conda_packages_is_refused(tmp_path: Path) -> None:
    art = PipArtifact("jax", "0.4.30", URL, SHA, None)
    text = render_pylock(plan(), [art], {"platform": "linux-64"})
    conda_plan = json.dumps(
        plan(conda=("cudatoolkit=11.2",)).to_json(with_rejected=False), sort_keys=True
    )
    text = text.split("plan = ")[0] + "plan = " + json.dumps(conda_plan) + "\n"
    with pytest.raises(LockfileError, match="conda packages"):
        load_locked(write(tmp_path, text, "pylock.conda.toml"))


def test_unknown_platform_cannot_be_exported() -> None:
    with pytest.raises(LockError, match="platform"):
        render_pylock(plan(platform="linux-s390x"), [], {})


# ------------------------------------------------------------------------------- the CLI

MACHINE = ["jax", "--gpu", "6.1", "--driver", "535.183.01", "--os", "linux", "--arch", "x86_64"]


def run(args: list[str], cwd: Path) -> Any:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["lock", *args])
    finally:
        os.chdir(old)


def test_check_of_a_missing_pylock_uses_the_pep_751_default_name(tmp_path: Path) -> None:
    res = run([*MACHINE, "--format", "pylock", "--check"], tmp_path)
    assert res.exit_code == 1 and "pylock.toml does not exist" in res.output


def test_check_of_a_pylock_made_for_another_plan_says_stale_not_a_traceback(tmp_path: Path) -> None:
    write(tmp_path, good_text())
    res = run([*MACHINE, "--format", "pylock", "--check"], tmp_path)
    assert res.exit_code == 1, res.output
    assert "pylock.toml is stale" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pylock", "-o", "gpuenv.lock.yml"], "pylock.NAME.toml"),
        (["--format", "pylock", "--portable"], "--portable is for conda-lock files"),
        (["-o", "pylock.toml"], "a conda-lock file is YAML"),
    ],
)
def test_lock_refuses_what_it_cannot_honour(tmp_path: Path, args: list[str], message: str) -> None:
    res = run([*MACHINE, *args], tmp_path)
    assert res.exit_code == 2 and message in res.output
    assert list(tmp_path.iterdir()) == []


def test_the_header_command_is_the_command_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuenv.lock

    seen: dict[str, Any] = {}

    def fake_lock_plan(plan: Plan, options: Any, ideal: Any = None, started: Any = None) -> Any:
        seen["command"] = options.command
        seen["output"] = options.output
        raise LockError("stop here")

    monkeypatch.setattr(gpuenv.lock, "lock_plan", fake_lock_plan)
    res = run(
        [
            *MACHINE,
            "--no-probe",
            "--python",
            "3.11",
            "--channel",
            "a",
            "--channel",
            "b",
            "--exclude-newer",
            "2024-01-31",
            "--format",
            "pylock",
            "-o",
            "pylock.gpu.toml",
        ],
        tmp_path,
    )
    assert res.exit_code == 1 and "stop here" in str(res.exception)
    assert seen["output"] == Path("pylock.gpu.toml")
    assert seen["command"] == (
        "gpuenv lock jax --gpu 6.1 --driver 535.183.01 --os linux --arch x86_64 --python 3.11"
        " --channel a --channel b --exclude-newer 2024-01-31 --format pylock --no-probe"
        " -o pylock.gpu.toml"
    )


# gpuenv's limit for a pylock.toml (a lock of a few hundred wheels is well under 1 MiB)
PYLOCK_LIMIT = 16 * 1024 * 1024


@pytest.mark.parametrize("over", [0, 1])
def test_a_pylock_over_16_mib_is_refused_before_it_is_parsed(tmp_path: Path, over: int) -> None:
    head = good_text()
    pad = PYLOCK_LIMIT + over - len(head.encode()) - 3
    path = write(tmp_path, head + "#" + "x" * pad + "\n\n")
    assert path.stat().st_size == PYLOCK_LIMIT + over
    if over:
        with pytest.raises(LockfileError, match=f"far smaller \\(limit {PYLOCK_LIMIT}\\)"):
            load_locked(path)
    else:  # at the limit it is read (and this one is a valid lock)
        assert load_locked(path).pip
