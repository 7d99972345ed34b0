"""scripts/maint/draft_news.py: the weekly maintenance job turns upstream news into drafts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "maint"))
import draft_news  # noqa: E402


def _findings(tmp_path: Path, *drafts: object) -> Path:
    doc = {"findings": [{"level": "error", "upstream": True, "draft": d} for d in drafts]}
    doc["findings"].append({"level": "warning", "upstream": False, "draft": None})
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(doc))
    return path


def _fake_gpuenv(tmp_path: Path) -> str:
    script = tmp_path / "fake_gpuenv.py"
    script.write_text("import sys\nprint('# drafted', *sys.argv[1:])\n")
    return f"{sys.executable} {script}"


def test_no_news_is_exit_0_and_no_drafts(tmp_path: Path) -> None:
    assert draft_news.main([str(_findings(tmp_path)), "-o", str(tmp_path / "d")]) == 0
    assert not (tmp_path / "d").exists()


def test_each_new_release_is_drafted_once(tmp_path: Path) -> None:
    findings = _findings(tmp_path, ["jax", "0.12.1"], ["jax", "0.12.1"], ["torch", "2.16.0"])
    out = tmp_path / "d"
    assert draft_news.main([str(findings), "-o", str(out), "--gpuenv", _fake_gpuenv(tmp_path)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["jax-0.12.1.toml", "torch-2.16.0.toml"]
    assert (out / "jax-0.12.1.toml").read_text() == "# drafted recipes draft jax 0.12.1\n"


@pytest.mark.parametrize(
    "pair", [["../etc", "1.0"], ["jax", "../../x"], ["jax"], "jax 1.0", [1, 2], ["jax", "1.0/x"]]
)
def test_a_hostile_draft_pair_is_refused(tmp_path: Path, pair: object) -> None:
    findings = _findings(tmp_path, pair)
    out = tmp_path / "d"
    assert draft_news.main([str(findings), "-o", str(out), "--gpuenv", _fake_gpuenv(tmp_path)]) == 2
    assert not out.exists()
