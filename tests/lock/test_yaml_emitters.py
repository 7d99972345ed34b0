"""The lockfile writer uses libyaml's emitter where PyYAML has one: a lockfile is the same text
on a machine with libyaml and on one without (a lab's lockfiles must not churn between them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuenv.lock.conda_lock import write

ROOT = Path(__file__).resolve().parents[2]

HOSTILE: dict[str, Any] = {
    "unicode": "é ünïcode 😀 \u2028 \x85 \ufeff",
    "long": "x" * 300,
    "long words": " ".join(["word"] * 60),
    "newlines": "line1\nline2\n\ntrailing\n",
    "tab": "a\tb",
    "quotes": "'single' \"double\" `back`",
    "yaml words": ["-", "?", ":", "null", "~", "yes", "No", "on", "0x10", "1e3", ".inf", "=", ""],
    "padded": ["  lead", "trail  ", " "],
    "indicators": ["#c", "&a", "*b", "!t", "|", ">", "%", "@", "[x]", "{y}", "a: b", "a #b"],
    "numbers": [0, -1, 1.5, 10**20, True, None],
    "url": "https://example.invalid/simple/pkg/pkg-1.0-py3-none-any.whl#sha256=" + "a" * 64,
    "nested": {"deep": [{"a": [1, {"b": "c"}]}], "empty": {}, "none": []},
}


def _both(document: Any) -> tuple[str, str]:
    pure = yaml.dump(document, Dumper=yaml.SafeDumper, sort_keys=False)
    return pure, write.render_lockfile(document)


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("path", sorted((ROOT / "lockfiles").glob("*.yml")), ids=lambda p: p.name)
def test_the_committed_lockfiles_render_alike(path: Path) -> None:
    pure, written = _both(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert written == pure


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_every_kind_of_value_renders_alike(key: str) -> None:
    pure, written = _both({"package": [{"name": key, "value": HOSTILE[key]}]})
    assert written == pure


def test_without_libyaml_the_pure_emitter_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    document = {"version": 1, "package": [{"name": "a", "url": HOSTILE["url"]}]}
    expected = yaml.dump(document, Dumper=yaml.SafeDumper, sort_keys=False)
    monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
    assert write.render_lockfile(document, "# header\n") == "# header\n" + expected
