"""Hostile and mistaken lab files: each is refused with one message naming file, table and key.

Lab files reach machines through shared repositories; a typo must not quietly change what a
class means, and a crafted file must not crash gpuenv or steer a lockfile's name out of its
folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.lab.load import LabError, load_lab
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase

STACK = '[stack]\nrequirements = ["jax"]\n'
GPU_CLASS = (
    '[[class]]\nname = "ampere"\nos = "linux"\ncompute_capability = "8.6"\ndriver = "550.54.14"\n'
)
CPU_CLASS = '[[class]]\nname = "cpu"\nos = "linux"\ngpu = "none"\n'


def lab_file(folder: Path, text: str) -> Path:
    path = folder / "lab.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path, kb: KnowledgeBase) -> str:
    with pytest.raises(LabError) as err:
        load_lab(path, kb)
    message = str(err.value)
    assert str(path) in message  # every message names the file
    return message


def test_the_example_lab_file_is_valid(kb: KnowledgeBase) -> None:
    example = Path(__file__).resolve().parents[3] / "examples" / "vision-lab" / "lab.toml"
    lab = load_lab(example, kb)
    assert [c.name for c in lab.classes][:2] == ["win10-maxwell-laptop", "pascal-workstation"]
    assert lab.packages == ("jupyterlab",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # wrong types
        (
            '[stack]\nrequirements = ["jax"]\npackages = "jupyterlab"\n' + CPU_CLASS,
            r"\[stack\] packages: expected a list of strings .*got a string \('jupyterlab'\)",
        ),
        (
            "[stack]\nrequirements = [1, 2]\n" + CPU_CLASS,
            r"\[stack\] requirements: item 1 is an integer",
        ),
        (
            '[stack]\nrequirements = "torch"\n' + CPU_CLASS,
            r"requirements: expected a list of strings",
        ),
        (
            STACK + "python = 3.10\n" + CPU_CLASS,
            r"\[stack\] python: expected a string, got a number \(3.1\)",
        ),
        (STACK + 'python = "3"\n' + CPU_CLASS, r"python = '3': expected a Python version"),
        ('lab = "x"\n' + STACK + CPU_CLASS, r"`lab` must be a table"),
        (
            STACK + '[class]\nname = "a"\nos = "linux"\ngpu = "none"\n',
            r"\[\[class\]\] \(two brackets\)",
        ),
        (
            STACK + GPU_CLASS.replace('"550.54.14"', "550.54"),
            r"driver: expected a string, got a number",
        ),
        (STACK + GPU_CLASS.replace('"8.6"', "8.6"), r"compute_capability: expected a string"),
        (STACK + CPU_CLASS + "priority = true\n", r"priority: expected an integer, got true/false"),
        (STACK + CPU_CLASS.replace('"linux"', "1"), r"os: expected a string, got an integer"),
        # unknown keys and typos: the closest valid key is named
        (
            STACK + GPU_CLASS.replace("compute_capability", "compute_capabilty"),
            r"\[\[class\]\] #1 \('ampere'\): unknown key 'compute_capabilty'; did you mean 'compute_capability'\?",
        ),
        (
            '[stak]\nrequirements = ["jax"]\n' + CPU_CLASS,
            r"top level: unknown key 'stak'; did you mean 'stack'\?",
        ),
        (
            '[lab]\nlockfile = "x"\n' + STACK + CPU_CLASS,
            r"\[lab\]: unknown key 'lockfile'; did you mean 'lockfiles'\?",
        ),
        (STACK + "frobnicate = true\n" + CPU_CLASS, r"\[stack\]: unknown key 'frobnicate'"),
        # conflicting keys
        (
            STACK + GPU_CLASS + 'gpu = "GeForce RTX 3090"\n',
            r"gpu and compute_capability exclude each other",
        ),
        (STACK + CPU_CLASS + 'driver = "535.183.01"\n', r"applies only to GPU classes"),
        (STACK + '[[class]]\nname = "a"\nos = "linux"\n', r"say which GPU the class has"),
        (
            STACK
            + '[[class]]\nname = "m"\nos = "macos"\ncompute_capability = "8.6"\ndriver = "550.54.14"\n',
            r"no CUDA on macOS",
        ),
        # bad values
        (STACK + GPU_CLASS.replace('"8.6"', '"8.6-6.0"'), r"range runs backwards"),
        (
            STACK + GPU_CLASS.replace('"8.6"', '"eight"'),
            r"compute_capability: not a compute capability",
        ),
        (
            STACK + GPU_CLASS.replace('"550.54.14"', '"abc"'),
            r"driver: not an NVIDIA driver version",
        ),
        (STACK + GPU_CLASS.replace('"8.6"', '"1.0"'), r"covers no known GPU"),
        (STACK + CPU_CLASS.replace('"linux"', '"beos"'), r"os must be one of"),
        (STACK + CPU_CLASS + 'arch = "sparc"\n', r"arch: unknown CPU architecture"),
        (STACK + CPU_CLASS + 'priority = "high"\n', r"priority: expected an integer"),
        # what a class accepts when its planned build cannot be locked (issue 18)
        (STACK + GPU_CLASS + "fallback = true\n", r"fallback: expected a string, got true/false"),
        (STACK + GPU_CLASS + 'fallback = ["cpu"]\n', r"fallback: expected a string, got a list"),
        (
            STACK + GPU_CLASS + 'fallback = "any"\n',
            r"fallback = 'any': expected one of 'none', 'gpu', 'cpu'",
        ),
        (STACK + GPU_CLASS + 'fallback = "CPU "\n', r"fallback = 'CPU': expected one of"),
        (STACK + GPU_CLASS + 'fallback = ""\n', r"fallback is empty"),
        (
            STACK + GPU_CLASS + 'fallbacks = "cpu"\n',
            r"unknown key 'fallbacks'; did you mean 'fallback'",
        ),
        (
            '[lab]\nlockfiles = "/etc"\n' + STACK + CPU_CLASS,
            r"lockfiles = '/etc': give a folder relative",
        ),
        ('[lab]\nlockfiles = "C:/x"\n' + STACK + CPU_CLASS, r"give a folder relative"),
        ('[lab]\nname = ""\n' + STACK + CPU_CLASS, r"\[lab\] name is empty"),
        # bad requirements and packages
        (
            '[stack]\nrequirements = ["numpy"]\n' + CPU_CLASS,
            r"\[stack\] requirements: unknown framework",
        ),
        (
            '[stack]\nrequirements = ["torch>=abc"]\n' + CPU_CLASS,
            r"\[stack\] requirements: not a requirement",
        ),
        (
            "[stack]\nrequirements = [\"torch; sys_platform == 'linux'\"]\n" + CPU_CLASS,
            r"environment marker",
        ),
        (
            '[stack]\nrequirements = ["jax"]\npackages = ["not a requirement!"]\n' + CPU_CLASS,
            r"packages: 'not a requirement!' is not a requirement",
        ),
        (
            '[stack]\nrequirements = ["jax"]\npackages = ["evil @ https://example.invalid/evil-1.0.tar.gz"]\n'
            + CPU_CLASS,
            r"direct URLs are not allowed",
        ),
        (  # the command line refuses a marker on an extra package: the lab file does too
            '[stack]\nrequirements = ["jax"]\npackages = ["pandas; sys_platform == \'win32\'"]\n'
            + CPU_CLASS,
            r"packages: .*environment markers are not supported",
        ),
        (
            '[stack]\nrequirements = ["jax"]\npackages = ["ok", "bad\\u0000"]\n' + CPU_CLASS,
            r"item 2 .* control characters",
        ),
        ("[stack]\nrequirements = []\n" + CPU_CLASS, r"requirements is empty"),
        ("[lab]\n" + CPU_CLASS, r"requirements is empty"),
        (STACK, r"no \[\[class\]\] rows"),
        (STACK + "[stack.x]\ny = 1\n" + CPU_CLASS, r"\[stack\]: unknown key 'x'"),
        ("[[lab]]\n" + STACK + CPU_CLASS, r"`lab` must be a table"),
    ],
)
def test_malformed_lab_files_are_refused(
    text: str, expected: str, tmp_path: Path, kb: KnowledgeBase
) -> None:
    message = refused(lab_file(tmp_path, text), kb)
    assert re.search(expected, message), message
    assert "\n" not in message  # one paragraph


@pytest.mark.parametrize(
    "name",
    [
        "../evil",
        "a/b",
        "a\\b",
        ".hidden",
        "trailing.",
        "-dash",
        "con",
        "NUL.x",
        "with space",
        "x" * 65,
        "caf\u00e9",
        "new\nline",
        "",
    ],
)
def test_class_names_are_plain_file_names(name: str, tmp_path: Path, kb: KnowledgeBase) -> None:
    text = (
        STACK
        + f'[[class]]\nname = "{name.encode("unicode_escape").decode()}"\nos = "linux"\ngpu = "none"\n'
    )
    message = refused(lab_file(tmp_path, text), kb)
    assert "name" in message
    assert not (tmp_path / "lockfiles").exists()


def test_class_names_differing_only_in_case_clash(tmp_path: Path, kb: KnowledgeBase) -> None:
    text = STACK + GPU_CLASS + GPU_CLASS.replace('"ampere"', '"Ampere"').replace('"8.6"', '"9.0"')
    assert "'ampere' and 'Ampere' name the same lockfile" in refused(lab_file(tmp_path, text), kb)


def test_overlapping_gpu_classes_are_named(tmp_path: Path, kb: KnowledgeBase) -> None:
    wide = GPU_CLASS.replace('"ampere"', '"wide"').replace('"8.6"', '"8.0-8.9"')
    message = refused(lab_file(tmp_path, STACK + GPU_CLASS + wide), kb)
    assert "'ampere' and 'wide' overlap" in message and "8.6" in message and "priority" in message


def test_two_cpu_classes_for_one_platform_clash(tmp_path: Path, kb: KnowledgeBase) -> None:
    text = STACK + CPU_CLASS + CPU_CLASS.replace('"cpu"', '"login"')
    assert "'cpu' and 'login' are both CPU classes" in refused(lab_file(tmp_path, text), kb)


def test_priority_settles_an_overlap(tmp_path: Path, kb: KnowledgeBase) -> None:
    # driver tiers: the same GPUs, a newer floor preferred where the machine's driver allows it
    new = GPU_CLASS.replace('"ampere"', '"ampere-new"').replace("550.54.14", "560.35.03")
    text = STACK + GPU_CLASS + new + "priority = 1\n" + CPU_CLASS
    lab = load_lab(lab_file(tmp_path, text), kb)
    recent = describe_machine(kb, gpu="8.6", driver="570.86.15", os_name="linux", arch="x86_64")
    older = describe_machine(kb, gpu="8.6", driver="555.42.02", os_name="linux", arch="x86_64")
    assert lab.match(recent)[0].name == "ampere-new"  # type: ignore[union-attr]
    assert lab.match(older)[0].name == "ampere"  # type: ignore[union-attr]


def test_disjoint_classes_on_other_platforms_do_not_clash(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    wsl = GPU_CLASS.replace('"ampere"', '"ampere-wsl"').replace('"linux"', '"wsl"')
    arm = CPU_CLASS.replace('"cpu"', '"cpu-arm"') + 'arch = "aarch64"\n'
    lab = load_lab(lab_file(tmp_path, STACK + GPU_CLASS + wsl + CPU_CLASS + arm), kb)
    assert len(lab.classes) == 4


def test_not_utf8_and_not_toml(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = tmp_path / "lab.toml"
    path.write_bytes(b'[stack]\nrequirements = ["\xff"]\n')
    assert "not UTF-8" in refused(path, kb)
    path.write_text("[stack\n")
    assert "not valid TOML" in refused(path, kb)


def test_oversized_lab_file(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = lab_file(tmp_path, STACK + CPU_CLASS + "#" * (2 << 20) + "\n")
    assert "larger than" in refused(path, kb)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, kb: KnowledgeBase) -> None:
    fifo = tmp_path / "lab.toml"
    os.mkfifo(fifo)
    assert "not a regular file" in refused(fifo, kb)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused(kb: KnowledgeBase) -> None:
    assert "not a regular file" in refused(Path("/dev/zero"), kb)


def _gpuenv(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={
            **os.environ,
            "GPUENV_HOME": str(cwd.parent / "home"),
            "GPUENV_CACHE_DIR": str(cwd.parent / "c"),
        },
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            STACK + GPU_CLASS.replace("compute_capability", "compute_capabilty"),
            "did you mean 'compute_capability'",
        ),
        ("[stack]\nrequirements = [1, 2]\n" + CPU_CLASS, "item 1 is an integer"),
        (
            STACK + '[[class]]\nname = "../../x"\nos = "linux"\ngpu = "none"\n',
            "becomes a file name",
        ),
    ],
)
@pytest.mark.parametrize("command", [["lock", "--check"], ["setup", "--dry-run"]])
def test_cli_exits_2_with_one_message(
    text: str, expected: str, command: list[str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path = lab_file(work, text)
    before = sorted(p.name for p in work.iterdir())
    result = _gpuenv(command[0], "--lab", str(path), *command[1:], cwd=work)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert expected in result.stderr and str(path) in result.stderr
    assert result.stderr.startswith("gpuenv: error:") and result.stderr.count("\n") == 1
    assert sorted(p.name for p in work.iterdir()) == before  # nothing written


def test_a_lockfiles_symlink_loop_is_refused(tmp_path: Path, kb: KnowledgeBase) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    path = lab_file(tmp_path, '[lab]\nlockfiles = "loop/x"\n' + STACK + CPU_CLASS)
    try:
        lab = load_lab(path, kb)
    except LabError as exc:  # refused, naming the key ...
        assert "lockfiles" in str(exc)
    else:  # ... or (Python 3.13+ resolves loops leniently) kept inside the lab's folder
        assert lab.lockfile_dir.is_relative_to(tmp_path)


@pytest.mark.parametrize("lockfiles", ["../outside", "../../outside", "escape/inner"])
def test_lockfiles_may_not_lead_out_of_the_labs_repository(
    lockfiles: str, tmp_path: Path, kb: KnowledgeBase
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "labs").mkdir()
    (tmp_path / "outside").mkdir()
    (repo / "labs" / "escape").symlink_to(tmp_path / "outside")  # a link counts where it leads
    path = repo / "labs" / "lab.toml"
    path.write_text(f'[lab]\nlockfiles = "{lockfiles}"\n' + STACK + CPU_CLASS, encoding="utf-8")
    if lockfiles == "../outside":  # one level up is still inside the repository
        assert load_lab(path, kb).lockfile_dir == repo / "outside"
        return
    message = refused(path, kb)
    assert "outside" in message and str(repo) in message


def test_outside_a_checkout_lockfiles_stay_beside_the_lab_file(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    (tmp_path / "lab").mkdir()
    path = tmp_path / "lab" / "lab.toml"
    path.write_text('[lab]\nlockfiles = "../x"\n' + STACK + CPU_CLASS, encoding="utf-8")
    assert "keep the lockfiles inside it" in refused(path, kb)


def test_jupyter_true_adds_ipykernel_once(tmp_path: Path, kb: KnowledgeBase) -> None:
    lab = load_lab(lab_file(tmp_path, STACK + "jupyter = true\n" + CPU_CLASS), kb)
    assert lab.jupyter and lab.packages.count("ipykernel") == 1
    pinned = STACK + 'packages = ["ipykernel==6.29.5"]\njupyter = true\n' + CPU_CLASS
    lab = load_lab(lab_file(tmp_path, pinned), kb)
    assert lab.packages == ("ipykernel==6.29.5",)  # the lab's own pin is kept, not doubled
    # the same project under another spelling (PEP 503) is the same project
    spelled = STACK + 'packages = ["IPyKernel==6.29.5"]\njupyter = true\n' + CPU_CLASS
    assert load_lab(lab_file(tmp_path, spelled), kb).packages == ("IPyKernel==6.29.5",)


@pytest.mark.parametrize("value", ['"yes"', "1", "[true]"])
def test_jupyter_must_be_true_or_false(value: str, tmp_path: Path, kb: KnowledgeBase) -> None:
    message = refused(lab_file(tmp_path, STACK + f"jupyter = {value}\n" + CPU_CLASS), kb)
    assert "jupyter: expected true or false" in message


@pytest.mark.parametrize(
    ("written", "policy"),
    [("", "gpu"), ('fallback = "none"\n', "none"), ('fallback = "cpu"\n', "cpu")],
)
def test_a_class_says_what_fallback_it_accepts(
    written: str, policy: str, tmp_path: Path, kb: KnowledgeBase
) -> None:
    lab = load_lab(lab_file(tmp_path, STACK + GPU_CLASS + written), kb)
    assert lab.classes[0].fallback == policy


def test_the_lab_file_knows_the_lock_stage_policies() -> None:
    from gpuenv.lab.schema import FALLBACK_CHOICES
    from gpuenv.lock.fallback import DEFAULT_POLICY, FALLBACK_POLICIES

    assert FALLBACK_CHOICES == FALLBACK_POLICIES and DEFAULT_POLICY == "gpu"
