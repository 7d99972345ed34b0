"""Record fatbin readings in the archsets they confirm: `measured = ["<wheel> sha256=<hex>"]`.

    .venv/bin/python scripts/maint/apply_measured.py scripts/maint/data/fatbins.json

For each reading (from measure_fatbins.py) whose wheel holds exactly its row's lists, the wheel
is added to that archset's `measured` line in recipes/<framework>.toml (written after its `ptx`
line). Readings that contradict their row are printed and left for a person: the row is then
corrected by hand, the binary being the authority, and its note says so.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from packaging.utils import parse_wheel_filename

MEASURED_SOURCE = (
    "measured: the fatbin headers of the CUDA libraries of each wheel in `measured` hold exactly"
    " these SASS and PTX lists (gpuenv recipes verify --artifacts)"
)
FILES = {"tensorflow": "tensorflow.toml", "torch": "pytorch.toml", "jax": "jax.toml"}


def _key(entry: str) -> tuple[object, str]:
    name = entry.split(" ", 1)[0]
    return parse_wheel_filename(name)[1], name


def main() -> int:
    readings = json.loads(Path(sys.argv[1]).read_text())["readings"]
    root = Path(__file__).resolve().parents[2] / "recipes"
    wanted: dict[tuple[str, str], set[str]] = {}
    for r in readings:
        if r["differences"] or not r["sha256"] or not r["archset"]:
            print(f"not applied: {r['wheel']}: {r['differences'] or 'no sha256/archset'}")
            continue
        wanted.setdefault((r["framework"], r["archset"]), set()).add(
            f"{r['wheel']} sha256={r['sha256']}"
        )
    for (framework, archset), entries in sorted(wanted.items()):
        path = root / FILES[framework]
        text = path.read_text()
        head = f"[archsets.{archset}]\n"
        start = text.index(head) + len(head)
        end = text.find("\n[", start)
        block = text[start:end]
        old = re.search(r"^measured = (\[.*\])\n", block, re.M)
        if old:
            entries |= set(json.loads(old[1]))
            block = block[: old.start()] + block[old.end() :]
        line = "measured = " + json.dumps(sorted(entries, key=_key)) + "\n"
        ptx = re.search(r"^ptx = .*\n", block, re.M)
        if ptx is None:
            raise SystemExit(f"{path}: [archsets.{archset}] has no ptx line")
        block = block[: ptx.end()] + line + block[ptx.end() :]
        source = re.search(r'^source = "(.*)"\n', block, re.M)
        if source and MEASURED_SOURCE not in source[1]:
            sentence = source[1].rstrip(".") + "; " + MEASURED_SOURCE
            block = block[: source.start(1)] + sentence + block[source.end(1) :]
        path.write_text(text[:start] + block + text[end:])
        print(f"{path.name} [archsets.{archset}]: {len(entries)} wheels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
