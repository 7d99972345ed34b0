"""Wheel build step: ship the parsed knowledge base, so the first run after install is fast.

gpuenv caches the parsed knowledge base (a pickle keyed by a hash of the recipes' bytes) in the
user's cache folder; without a shipped copy the first command after every install or upgrade
parses all of recipes/ (about 0.1 s). This hook runs gpuenv's own loader from the source tree on
the recipes being packaged, in a child process with a private cache folder, and puts the result
in the wheel under gpuenv/_cache/ (recipes/<key>.pickle), which gpuenv.cache reads before the user's
cache. Editable installs read the checkout and skip this.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# gpuenv's source goes on sys.path in the child itself: pip's build isolation hands its build
# environment (hatchling, packaging) over through PYTHONPATH and a sitecustomize that drops
# paths it does not know, so neither may be replaced or relied on
_LOAD = (
    "import sys; sys.path.insert(0, sys.argv[1]);"
    " from gpuenv.recipes import load_knowledge_base; load_knowledge_base()"
)


class KnowledgeBaseHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        out = root / "build" / "gpuenv-packaged-cache"
        shutil.rmtree(out, ignore_errors=True)
        env = {
            **os.environ,
            "GPUENV_CACHE_DIR": str(out),
            "GPUENV_RECIPES": str(root / "recipes"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        subprocess.run(
            [sys.executable, "-c", _LOAD, str(root / "installer")], env=env, check=True, cwd=root
        )
        # what the loader cached by content (one entry today: recipes/<hash>.pickle), at the
        # same path; not its stamps file, which names this build's folder and files' times
        pickles = sorted(p for p in out.rglob("*.pickle") if not p.name.startswith("stamps-"))
        if not pickles:
            raise RuntimeError(f"gpuenv's loader cached nothing in {out}")
        for path in pickles:
            build_data["force_include"][str(path)] = (
                f"gpuenv/_cache/{path.relative_to(out).as_posix()}"
            )
