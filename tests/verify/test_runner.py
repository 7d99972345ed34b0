"""How a probe's interpreter is started: isolated from the user's PYTHON* variables, yet honouring
their wish for no bytecode (which `-I` alone would drop)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from gpuenv.verify.probes import RESULT_MARKER
from gpuenv.verify.runner import interpreter_flags, run_probe

# A probe stand-in: imports a module beside it (as the real probes import _probe_common) and
# reports how its interpreter was started.
_PROBE = f"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helper
facts = {{"isolated": sys.flags.isolated, "no_bytecode": sys.flags.dont_write_bytecode,
          "path_var_seen": any(p.endswith("from-pythonpath") for p in sys.path)}}
print({RESULT_MARKER!r} + json.dumps(facts))
"""


def _run(tmp_path: Path, extra: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "helper.py").write_text("VALUE = 1\n")
    script = folder / "probe.py"
    script.write_text(_PROBE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tmp_path / "from-pythonpath")
    run = run_probe(Path(sys.executable), "env", timeout=60, env={**env, **extra}, script=script)
    assert run.facts is not None, run.stderr_tail
    return run.facts, sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("value", ["1", "0", "yes"])  # Python's rule: any non-empty value
def test_a_user_who_wants_no_bytecode_gets_none_from_a_probe(tmp_path: Path, value: str) -> None:
    facts, files = _run(tmp_path, {"PYTHONDONTWRITEBYTECODE": value})
    assert facts == {"isolated": 1, "no_bytecode": True, "path_var_seen": False}
    assert "__pycache__" not in files  # importing helper wrote nothing beside it


@pytest.mark.parametrize("value", [None, ""])
def test_otherwise_a_probe_leaves_bytecode_as_python_does(
    tmp_path: Path, value: Optional[str]
) -> None:
    facts, files = _run(tmp_path, {} if value is None else {"PYTHONDONTWRITEBYTECODE": value})
    assert facts == {"isolated": 1, "no_bytecode": False, "path_var_seen": False}
    assert "__pycache__" in files  # the next import of the environment reads it


def test_the_flags_stay_isolating_whatever_else_is_set() -> None:
    hostile = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": "/tmp/evil", "PYTHONSTARTUP": "x.py"}
    assert interpreter_flags(hostile) == ["-I", "-B"]
    assert interpreter_flags({"PYTHONPATH": "/tmp/evil"}) == ["-I"]
    assert json.dumps(interpreter_flags({})) == '["-I"]'
