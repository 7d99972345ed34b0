"""docs/api.md's examples run, one after another, against local repositories: they cannot drift.

The page says which names the test provides: workdir, index_url, channel_url, stand_in_plan."""

from __future__ import annotations

import re
from pathlib import Path

from installrepos import InstallRepos, jax_plan

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_the_page_has_an_example_for_each_function() -> None:
    blocks = code_blocks(DOC.read_text(encoding="utf-8"))
    for name in ("detect", "describe", "resolve", "explain", "lock", "install", "verify"):
        assert any(f"gpuenv.{name}(" in block for block in blocks), name


def test_the_examples_run(install_repos: InstallRepos, tmp_path: Path) -> None:
    namespace: dict[str, object] = {
        "__name__": "api_md",
        "workdir": tmp_path,
        "index_url": install_repos.index,
        "channel_url": install_repos.channel,
        "stand_in_plan": jax_plan(),
    }
    for number, block in enumerate(code_blocks(DOC.read_text(encoding="utf-8")), 1):
        code = compile(block, f"docs/api.md block {number}", "exec")
        exec(code, namespace)  # our own documentation's examples
    assert (tmp_path / "lab.conda-lock.yml").is_file()
