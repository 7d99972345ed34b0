"""The fleet playbook (scripts/fleet/), the gpuenv.lab collection (ansible/gpuenv_lab) and the
Windows bootstrap (scripts/bootstrap.ps1).

PowerShell is not available on Linux CI machines, so bootstrap.ps1 is checked statically: no
syntax that only PowerShell 7 has (it must run in Windows PowerShell 5.1), and every native
command's exit status looked at. The role runs for real against several hosts in
test_fleet_hosts.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from fleet_ansible import COLLECTION, PLAYBOOK, REPO, ansible_env, ansible_tool

WINDOWS_TASKS = REPO / "scripts" / "fleet" / "windows.yml"
BOOTSTRAP_PS1 = REPO / "scripts" / "bootstrap.ps1"
ROLE = COLLECTION / "roles" / "gpuenv"


# ---- the playbook ------------------------------------------------------------------------------


def test_playbook_syntax(tmp_path: Path) -> None:
    result = subprocess.run(
        [ansible_tool(), "-i", "localhost,", "-c", "local", "--syntax-check", str(PLAYBOOK)],
        capture_output=True,
        text=True,
        env=ansible_env(tmp_path),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_windows_tasks_syntax(tmp_path: Path) -> None:
    """windows.yml is loaded only at run time; check it against a stand-in for ansible.windows."""
    modules = tmp_path / "collections" / "ansible_collections" / "ansible" / "windows"
    (modules / "plugins" / "modules").mkdir(parents=True)
    (modules / "galaxy.yml").write_text(
        "namespace: ansible\nname: windows\nversion: 0.0.0\nreadme: README.md\nauthors: [test]\n"
    )
    (modules / "plugins" / "modules" / "win_shell.py").write_text(
        "DOCUMENTATION = '''\nmodule: win_shell\nshort_description: stand-in\n'''\n"
    )
    wrapper = tmp_path / "windows-check.yml"
    wrapper.write_text(
        "- hosts: windows\n  gather_facts: false\n  tasks:\n"
        f"    - ansible.builtin.import_tasks: {WINDOWS_TASKS}\n"
    )
    result = subprocess.run(
        [ansible_tool(), "-i", "winhost,", "--syntax-check", str(wrapper)],
        capture_output=True,
        text=True,
        env=ansible_env(tmp_path, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections")),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"gpuenv_requirements": "torch jax"}, "'torch', 'jax', '--name', 'it''s', '--json'"),
        (
            {"gpuenv_lab": "C:\\lab\\lab.toml"},
            "'--lab', 'C:\\lab\\lab.toml', '--name', 'it''s', '--json'",
        ),
    ],
)
def test_windows_setup_arguments_are_quoted_for_powershell(
    tmp_path: Path, variables: dict[str, str], expected: str
) -> None:
    """setup's arguments become PowerShell single-quoted strings (a quote doubled), rendered by
    Ansible from windows.yml's own expression."""
    tasks = yaml.safe_load(WINDOWS_TASKS.read_text(encoding="utf-8"))
    (task,) = [t for t in tasks if "gpuenv_win_setup_args" in t.get("vars", {})]
    play = tmp_path / "render.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "gather_facts": False,
                    "vars": {**task["vars"], "gpuenv_name": "it's"},
                    "tasks": [{"ansible.builtin.debug": {"msg": "@({{ gpuenv_win_setup_args }})"}}],
                }
            ]
        )
    )
    result = subprocess.run(
        [
            *(ansible_tool(), "-i", "localhost,", "-c", "local", str(play)),
            *("-e", json.dumps(variables), "-e", f"ansible_python_interpreter={sys.executable}"),
        ],
        capture_output=True,
        text=True,
        env=ansible_env(tmp_path),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.dumps(f"@({expected})") in result.stdout


def test_playbook_windows_play_is_separate_and_guarded() -> None:
    text = PLAYBOOK.read_text(encoding="utf-8")
    assert "hosts: windows" in text
    assert 'hosts: "all:!windows"' in text
    # a Linux-only fleet (and CI) must not need the ansible.windows collection
    assert not re.search(r"(?m)^\s*(?:-\s*)?ansible\.windows\.\w+:", text)
    assert "ansible.windows.win_shell" in WINDOWS_TASKS.read_text(encoding="utf-8")


# ---- the role -------------------------------------------------------------------------------------


def _yaml(path: Path) -> object:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_role_variable_has_its_argument_spec_with_the_same_default() -> None:
    defaults = _yaml(ROLE / "defaults" / "main.yml")
    specs = _yaml(ROLE / "meta" / "argument_specs.yml")
    assert isinstance(defaults, dict) and isinstance(specs, dict)
    options = specs["argument_specs"]["main"]["options"]
    assert set(options) == set(defaults)
    for name, spec in options.items():
        assert spec["default"] == defaults[name], name
        assert spec["description"], name


def test_the_collection_readme_names_every_variable() -> None:
    readme = (COLLECTION / "README.md").read_text(encoding="utf-8")
    defaults = _yaml(ROLE / "defaults" / "main.yml")
    assert isinstance(defaults, dict)
    missing = [name for name in defaults if f"`{name}`" not in readme]
    assert not missing, f"ansible/gpuenv_lab/README.md does not describe {missing}"


def test_the_role_refuses_a_wrong_argument_before_it_touches_a_host(tmp_path: Path) -> None:
    """meta/argument_specs.yml is enforced: a word that is no boolean stops the role."""
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  roles:\n"
        "    - role: gpuenv.lab.gpuenv\n      gpuenv_install_packages: perhaps\n"
    )
    result = subprocess.run(
        [ansible_tool(), "-i", "localhost,", "-c", "local", str(play)],
        capture_output=True,
        text=True,
        env=ansible_env(tmp_path),
        timeout=120,
    )
    assert result.returncode != 0
    assert "Validating arguments against arg spec" in result.stdout
    assert "gpuenv_install_packages" in result.stdout and "Look for gpuenv" not in result.stdout


@pytest.mark.parametrize("install_only", [True, False])
def test_bootstrap_install_only_stops_before_setup(tmp_path: Path, install_only: bool) -> None:
    """The role installs gpuenv with GPUENV_INSTALL_ONLY=1 and runs gpuenv itself after."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    ran = tmp_path / "ran"
    for name, body in (("python", "exit 0"), ("gpuenv", f'echo "$@" >> "{ran}"')):
        (venv / "bin" / name).write_text(f"#!/bin/sh\n{body}\n")
        (venv / "bin" / name).chmod(0o755)
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHON": str(venv / "bin" / "python"),
        "GPUENV_VENV": str(venv),
    }
    if install_only:
        env["GPUENV_INSTALL_ONLY"] = "1"
    done = subprocess.run(
        ["sh", str(REPO / "scripts" / "bootstrap.sh"), "jax"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"gpuenv installed in {venv}" in done.stderr
    if install_only:
        assert not ran.exists()
    else:
        assert ran.read_text() == "setup jax\n"


def test_ansible_lint_production_profile(tmp_path: Path) -> None:
    lint = ansible_tool("ansible-lint")
    result = subprocess.run(
        [lint, "--profile", "production", "--offline", "ansible/gpuenv_lab", "scripts/fleet"],
        capture_output=True,
        text=True,
        env=ansible_env(tmp_path),
        timeout=300,
        cwd=REPO,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert "Profile 'production' was required, and it passed" in out


# ---- bootstrap.ps1: Windows PowerShell 5.1 -----------------------------------------------------


def _ps_code_lines() -> list[tuple[int, str]]:
    """(line number, code) with comments and string contents blanked out."""
    out = []
    for number, raw in enumerate(BOOTSTRAP_PS1.read_text(encoding="utf-8").splitlines(), 1):
        line = re.sub(r"'[^']*'", "''", raw)  # single-quoted strings
        line = re.sub(r'"(?:`.|[^"`])*"', '""', line)  # double-quoted strings
        line = line.split("#", 1)[0]
        out.append((number, line.rstrip()))
    return out


PS7_ONLY = [
    (r"\?\?", "the null-coalescing operator ?? (PowerShell 7)"),
    (r"\?\.|\?\[", "null-conditional member access ?. / ?[ (PowerShell 7)"),
    (r"\s\?\s[^:]*\s:\s", "the ternary operator a ? b : c (PowerShell 7)"),
    (r"&&", "the pipeline chain operator && (PowerShell 7)"),
    (r"\|\|", "the pipeline chain operator || (PowerShell 7)"),
    (r"(?i)-Parallel\b", "ForEach-Object -Parallel (PowerShell 7)"),
    (r"(?i)-AsByteStream", "Get-Content -AsByteStream (PowerShell 6+; 5.1 uses -Encoding Byte)"),
    (r"(?i)\$IsWindows|\$IsLinux|\$IsMacOS", "$IsWindows and friends (PowerShell 6+)"),
    (r"(?i)-AdditionalChildPath", "Join-Path -AdditionalChildPath (PowerShell 6+)"),
]


@pytest.mark.parametrize(("pattern", "what"), PS7_ONLY, ids=[w for _, w in PS7_ONLY])
def test_bootstrap_ps1_has_no_powershell7_syntax(pattern: str, what: str) -> None:
    hits = [f"line {n}: {code}" for n, code in _ps_code_lines() if re.search(pattern, code)]
    assert not hits, (
        f"bootstrap.ps1 uses {what}, which Windows PowerShell 5.1 lacks:\n" + "\n".join(hits)
    )


def test_bootstrap_ps1_join_path_takes_one_child() -> None:
    # 5.1's Join-Path has -Path and -ChildPath only: `Join-Path a b c` fails there
    bad = []
    for n, code in _ps_code_lines():
        for call in re.findall(r"Join-Path\s+([^)|;}]*)", code):
            positional = [t for t in call.split() if not t.startswith("-")]
            if len(positional) > 2:
                bad.append(f"line {n}: {code.strip()}")
    assert not bad, "Join-Path with more than one child path:\n" + "\n".join(bad)


NATIVE = re.compile(r"^\s*(?:\$\w+\s*=\s*)?(?:&\s|(?:py|python3?|pip|git|gpuenv)(?:\.exe)?\s)")


def test_bootstrap_ps1_checks_every_native_exit_code() -> None:
    lines = _ps_code_lines()
    unchecked = []
    for i, (n, code) in enumerate(lines):
        if not NATIVE.match(code):
            continue
        following = " ".join(c for _, c in lines[i + 1 : i + 5])
        if "$LASTEXITCODE" not in following:
            unchecked.append(f"line {n}: {code.strip()}")
    assert not unchecked, "native commands whose $LASTEXITCODE nobody checks:\n" + "\n".join(
        unchecked
    )
    assert (
        sum(1 for _, c in lines if NATIVE.match(c)) >= 4
    )  # venv, pip x2, setup: the checker sees them


def test_bootstrap_ps1_basics() -> None:
    text = BOOTSTRAP_PS1.read_text(encoding="utf-8")
    assert "$ErrorActionPreference = 'Stop'" in text
    assert "'py', '-3'" in text and "'python'" in text  # py launcher first, then python
    assert "GPUENV_VENV" in text
    assert re.search(r"-m pip install --quiet -e \$here", text)
    assert re.search(r"Scripts\\gpuenv\.exe", text) and "setup @args" in text
    assert "no Python 3.10 or newer found" in text
    # PowerShell 5.1 reads a BOM-less script as the ANSI code page: keep it ASCII
    assert text.isascii()


# ---- the real thing, on this machine -------------------------------------------------------------


@pytest.mark.network
def test_playbook_sets_up_localhost(tmp_path: Path) -> None:
    """Without a lab file: the role installs gpuenv from this checkout (bootstrap.sh, from the
    package index) and runs `gpuenv setup jax` there."""
    report = tmp_path / "report.json"
    command = [
        ansible_tool(),
        *("-i", "localhost,", "-c", "local", str(PLAYBOOK)),
        *("-e", f"gpuenv_src={REPO}"),
        *("-e", f"gpuenv_venv={tmp_path / 'venv'}"),
        *("-e", "gpuenv_requirements=jax"),
        *("-e", "gpuenv_env_name=fleet-ci"),
        *("-e", f"gpuenv_report={report}"),
    ]
    env = ansible_env(tmp_path, GPUENV_HOME=str(tmp_path / "home"))
    started = time.monotonic()
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=1200, cwd=tmp_path
    )
    took = time.monotonic() - started
    log = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, log
    data = json.loads(report.read_text(encoding="utf-8"))
    host = data["hosts"]["localhost"]
    assert host["ok"] is True, host.get("error")
    assert host["setup"]["command"] == "setup" and host["setup"]["status"] == "installed"
    assert host["setup"]["verified"] is True and host["changed"] is True
    assert host["machine"]["platform"] == "linux-64", host["machine"]
    assert host["verify"]["ok"] is True, host["verify"]
    assert "jax" in host["verify"]["frameworks"]
    assert data["summary"]["hosts"] == 1
    assert data["summary"]["verified"] == 1
    print(f"first run: {took:.0f} s")

    # a second run changes nothing: gpuenv is there, setup is its own no-op, reported as such
    again = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=1200, cwd=tmp_path
    )
    assert again.returncode == 0, again.stdout[-6000:] + again.stderr[-3000:]
    second = json.loads(report.read_text(encoding="utf-8"))["hosts"]["localhost"]
    assert second["changed"] is False, second["setup"]
    assert second["setup"]["status"] == "unchanged"


def test_the_windows_entry_point_runs_under_the_default_execution_policy() -> None:
    """Windows ships with the Restricted policy, which refuses `.\\bootstrap.ps1` outright: the
    documented entry point must bypass it for its own process only."""
    raw = (REPO / "scripts" / "bootstrap.cmd").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")  # cmd.exe parses CRLF files reliably
    cmd = raw.decode("utf-8")
    launch = next(line for line in cmd.splitlines() if line.lower().startswith("powershell"))
    assert "-ExecutionPolicy Bypass" in launch and '-File "%~dp0bootstrap.ps1" %*' in launch
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "scripts\\bootstrap.cmd" in readme and ".\\scripts\\bootstrap.ps1`" not in readme
