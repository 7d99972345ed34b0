"""`setup` for everyday use: extra packages locked with the framework and kept across rebuilds
(`gpuenv add`), a Jupyter kernel, warnings before a rebuild drops something, `--json`.

Setup runs in this process against local repositories: detection and verification are stand-ins,
planning is setup's own code over a stand-in resolver (the local index has stand-in JAX
releases), locking and installing are real.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import gpuenv.detect
import gpuenv.index.config
import gpuenv.lock
import gpuenv.lock.availability
import gpuenv.verify
from gpuenv.cli import main
from gpuenv.envs.store import EnvLocation, interpreter, read_metadata
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import load_knowledge_base
from gpuenv.setup.record import SetupRecord, read_record
from installrepos import InstallRepos, jax_plan, run_in
from localrepos import build_simple_index, build_wheel
from storehelpers import StandInVerdict


@dataclasses.dataclass
class _Sourced:
    plan: Any
    ideal: Any
    fresh: tuple[str, ...] = ()
    available: Any = None
    fallback: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        return []


@pytest.fixture
def local(
    install_repos: InstallRepos,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """An index with the stand-in JAX plus small extra packages, and setup pointed at it."""
    root = tmp_path_factory.mktemp("everyday-index")
    wheels = sorted(install_repos.wheels.glob("*.whl"))
    wheels += [
        build_wheel(root / "w", "tinytool", "1.0", files={"tinytool/__init__.py": "V = 1\n"}),
        build_wheel(root / "w", "tinytool", "2.0", files={"tinytool/__init__.py": "V = 2\n"}),
        build_wheel(root / "w", "otherlib", "1.0", files={"otherlib/__init__.py": ""}),
        build_wheel(root / "w", "ipykernel", "6.0", files={"ipykernel_launcher.py": "print(1)\n"}),
    ]
    index = gpuenv.index.config.IndexConfig(index_url=build_simple_index(root / "index", wheels))
    chosen = {"jax": "0.4.30", "resolved": 0}
    machine = describe_machine(
        load_knowledge_base(), gpu=None, driver=None, os_name="linux", arch=None
    )
    real_lock = gpuenv.lock.lock_plan

    def resolve_with_sources(*a: Any, **_kw: Any) -> _Sourced:
        chosen["resolved"] += 1
        chosen["asked"] = tuple(a[1])  # the requirements setup planned for
        plan = jax_plan(chosen["jax"])
        return _Sourced(plan, plan)

    def lock_plan(plan: Any, options: gpuenv.lock.LockOptions) -> Any:
        local = dict(indexes=index, channels=(install_repos.channel,))
        return real_lock(plan, dataclasses.replace(options, exclude_newer="none", **local))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setattr(gpuenv.detect, "detect_machine", lambda: machine)
    monkeypatch.setattr(gpuenv.lock.availability, "resolve_with_sources", resolve_with_sources)
    monkeypatch.setattr(gpuenv.lock, "lock_plan", lock_plan)
    monkeypatch.setattr(gpuenv.index.config, "user_index_config", lambda: index)
    monkeypatch.setattr(gpuenv.verify, "verify_environment", lambda *_a, **_kw: StandInVerdict())
    return chosen


def recorded() -> SetupRecord:
    record = read_record("default")
    assert record is not None
    return record


def gpuenv_main(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def env_python() -> Path:
    current = EnvLocation.named("default").current()
    assert current is not None
    return interpreter(current)


def test_extra_packages_are_locked_with_the_framework_and_survive_a_rebuild(
    local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = gpuenv_main("setup", "jax", "tinytool<2", capsys=capsys)
    assert code == 0, err
    assert "(new, venv)" in out
    assert run_in(env_python(), "import jax, tinytool; print(tinytool.V)") == "1"
    assert recorded().packages == ("tinytool<2",)
    # a new knowledge base (here: a newer JAX) rebuilds the environment: tinytool stays
    local["jax"] = "0.4.31"
    code, out, err = gpuenv_main("setup", "--force", capsys=capsys)  # as a changed inputs hash
    assert code == 0, err
    # the summary does not call a replaced environment new (issue 18)
    assert "(rebuilt, replacing the one there, venv)" in out and "(new," not in out
    assert "using the frameworks recorded for this environment: jax" in err
    assert "keeping the packages added earlier: tinytool<2" in err
    assert "replacing environment default (jax 0.4.30 [cpu]) with (jax 0.4.31 [cpu])" in err
    assert run_in(env_python(), "import jax, tinytool; print(jax.__version__, tinytool.V)") == (
        "0.4.31 1"
    )


def test_gpuenv_add_locks_another_package_into_the_environment(
    local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpuenv_main("setup", "jax", capsys=capsys)[0] == 0
    code, out, err = gpuenv_main("add", "otherlib", "tinytool>=2", capsys=capsys)
    assert code == 0, err
    # add keeps the framework release the environment has, and says whose summary it is
    assert local["asked"][0] == "jax==0.4.30" and "keeping the framework releases" in err
    assert out.startswith("gpuenv add: ")
    assert recorded().frameworks == ("jax",)  # the request itself is unchanged
    assert run_in(env_python(), "import otherlib, tinytool; print(tinytool.V)") == "2"
    assert recorded().packages == (
        "otherlib",
        "tinytool>=2",
    )
    assert set(read_metadata(env_python().parent.parent)["pip_packages"]) >= {
        "jax",
        "otherlib",
        "tinytool",
    }
    # --fresh forgets them
    code, _out, err = gpuenv_main("setup", "jax", "--fresh", capsys=capsys)
    assert code == 0, err
    assert recorded().packages == ()
    done = subprocess.run([str(env_python()), "-c", "import otherlib"], check=False)
    assert done.returncode != 0


def test_a_rebuild_names_packages_installed_by_hand(
    local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpuenv_main("setup", "jax", capsys=capsys)[0] == 0
    site = next(env_python().parent.parent.glob("lib/python3*/site-packages"))
    (site / "handmade-0.1.dist-info").mkdir()  # what `pip install handmade` leaves
    local["jax"] = "0.4.31"
    code, _out, err = gpuenv_main("setup", "jax", "--force", capsys=capsys)
    assert code == 0, err
    assert "handmade were installed into default by hand" in err
    assert "gpuenv add -n default handmade" in err


def test_jupyter_registers_a_kernel_that_outlives_rebuilds_and_goes_with_the_env(
    local: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = gpuenv_main("setup", "jax", "--jupyter", capsys=capsys)
    assert code == 0, err
    spec_path = tmp_path / "jupyter" / "kernels" / "gpuenv-default" / "kernel.json"
    spec = json.loads(spec_path.read_text())
    python = Path(spec["argv"][0])
    assert python == EnvLocation.named("default").link / "bin" / "python"  # the stable link
    assert run_in(python, "import ipykernel_launcher, jax; print('ok')").endswith("ok")
    local["jax"] = "0.4.31"
    assert gpuenv_main("setup", "--force", capsys=capsys)[0] == 0  # recorded --jupyter is kept
    assert run_in(python, "import jax; print(jax.__version__)") == "0.4.31"
    code, out, err = gpuenv_main("envs", "remove", "default", capsys=capsys)
    assert code == 0 and "removed its Jupyter kernel" in out
    assert not spec_path.parent.exists() and read_record("default") is None


def test_setup_json_is_one_document(
    local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = gpuenv_main("setup", "jax", "tinytool", "--json", capsys=capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["command"] == "setup" and doc["status"] == "installed"
    assert doc["stack"] == "jax 0.4.30 [cpu]" and doc["packages"] == ["tinytool"]
    assert doc["verified"] is True and doc["environment"].endswith("default")
    code, out, err = gpuenv_main("setup", "jax", "tinytool", "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["status"] == "unchanged"
    code, out, err = gpuenv_main("setup", "jax", "--dry-run", "--json", "--fresh", capsys=capsys)
    assert code == 0 and json.loads(out)["status"] == "dry-run"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("setup", "tinytool"), "name a framework"),
        (("setup", "jax", "evil @ https://example.invalid/evil.tar.gz"), "direct URLs"),
        (("setup", "jax", 'tinytool; sys_platform == "win32"'), "markers"),
        (("add", "-n", "nothing-here", "tinytool"), "no environment 'nothing-here'"),
    ],
)
def test_hostile_or_impossible_requests_are_refused(
    args: tuple[str, ...], expected: str, local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = gpuenv_main(*args, capsys=capsys)
    assert code == 2, (out, err)
    assert expected in err and "Traceback" not in err
    assert local["resolved"] == 0  # refused before anything was planned


def test_a_refused_setup_with_json_still_prints_one_document(
    local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = gpuenv_main("setup", "jax", "evil @ file:///tmp/x", "--json", capsys=capsys)
    assert code == 2 and err.startswith("gpuenv: error:")
    doc = json.loads(out)
    assert doc["ok"] is False and doc["exit"] == 2 and "direct URLs" in doc["error"]


@pytest.mark.parametrize(
    "damage",
    [
        {"frameworks": "jax", "packages": "tinytool"},  # strings, not lists
        {"frameworks": ["jax"], "packages": ["evil @ file:///tmp/x"]},
        {"frameworks": [1, 2], "packages": [None]},
    ],
)
def test_a_damaged_setup_record_is_ignored_not_trusted(
    damage: dict[str, Any], local: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuenv.setup.record import record_path

    assert gpuenv_main("setup", "jax", "tinytool", capsys=capsys)[0] == 0
    path = record_path("default")
    path.write_text(json.dumps({**json.loads(path.read_text()), **damage}))
    code, _out, err = gpuenv_main("setup", "jax", "--force", capsys=capsys)
    assert code == 0, err
    assert "Traceback" not in err and recorded().packages == ()


def test_the_activate_line_setup_prints_is_safe_to_paste(
    local: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a store under a folder with shell syntax in its name (a space, as in every macOS store)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("GPUENV_HOME", str(work / "st $(touch canary); it's"))
    monkeypatch.setenv("SHELL", "/bin/bash")
    for run in ("installed", "unchanged"):
        code, out, err = gpuenv_main("setup", "jax", capsys=capsys)
        assert code == 0, err
        (line,) = [x for x in out.splitlines() if x.strip().startswith("activate:")]
        pasted = line.split(":", 1)[1].strip()
        shown = subprocess.run(
            ["bash", "-c", pasted + ' && printf "%s" "$VIRTUAL_ENV"'],
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        assert not (work / "canary").exists(), run
        assert shown.returncode == 0, (run, pasted, shown.stderr)
        assert Path(shown.stdout).resolve() == env_python().parent.parent.resolve()


def test_an_explicit_lab_file_wins_over_the_recorded_request(
    local: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = gpuenv_main("setup", "jax", "tinytool<2", capsys=capsys)
    assert code == 0, err
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[lab]\nname = "t"\nlockfiles = "locks"\n'
        '[stack]\nrequirements = ["jax"]\npackages = ["otherlib"]\n'
        '[[class]]\nname = "cpu-only"\nos = "linux"\ngpu = "none"\n'
    )
    code, _, err = gpuenv_main("setup", "--lab", str(lab), capsys=capsys)
    assert code == 0, err
    assert f"the lab file {lab} replaces the request recorded for default" in err
    state = recorded()
    assert state.lab_class == "cpu-only" and state.frameworks == ()
    assert not any("tinytool" in p for p in state.packages)
    assert run_in(env_python(), "import otherlib; print('ok')") == "ok"


@pytest.mark.parametrize("last", ["uv's answer", "another Python"])
def test_the_programs_setup_builds_on_the_last_answer_while_uv_searches(
    local: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fresh_early_python: None,
    last: str,
) -> None:
    """As the program's install does (tests/envs/test_python_guess.py): setup starts no search
    before it needs one, but builds on the last answer while its own search runs, and builds
    again when the search names another interpreter."""
    from gpuenv.envs import early_python
    from installrepos import PY
    from slow_uv import remembered, search_answer, slow_uv, stand_in_python, uv_events

    answer = search_answer(PY)
    if not answer:
        pytest.skip(f"uv finds no Python {PY} here")
    (tmp_path / "uv-bin").mkdir()
    uv, log = slow_uv(tmp_path / "uv-bin", monkeypatch)
    found = answer if last == "uv's answer" else stand_in_python(tmp_path, f'exec "{answer}" "$@"')
    remembered(uv, PY, found)
    early_python.mark_program()  # what `gpuenv setup`'s program does first (_entry)
    code, _out, err = gpuenv_main("setup", capsys=capsys)
    assert code == 0, err
    assert env_python().exists()
    events = uv_events(log)
    venvs = [e for e in events if e.startswith("start venv")]
    assert [v.split()[-1] for v in venvs] == list(dict.fromkeys([found, answer]))
    # planning asked first (whether the Python is there); the install's own search is the last
    last_search_end = len(events) - 1 - events[::-1].index("end python find")
    assert events.index(venvs[0]) < last_search_end
