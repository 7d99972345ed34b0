"""`gpuenv export LOCKFILE --to dockerfile -o DIR`: a build context (Dockerfile, the
requirements list, the check) that installs exactly that lockfile's wheels into a venv of the
plan's Python, hash-checked by pip, and imports each framework while the image is built. A GPU
plan's CUDA libraries come from its wheels and the driver from the host (`--gpus all`), so the
base is a plain Python image; `docker run IMAGE` checks the GPU."""

from __future__ import annotations

import json

from gpuenv.export.recipe import CHECK, PREFIX, REQUIREMENTS, WHEELS, Recipe, modules_of

FILE = "Dockerfile"


def default_base(recipe: Recipe) -> str:
    return f"python:{recipe.python}-slim"


def dockerfile(recipe: Recipe, base: str, lockfile_name: str) -> str:
    modules = modules_of(recipe)
    run_check = [*modules.split(), *(["--gpu"] if recipe.on_gpu else [])]
    install = (
        f"{PREFIX}/bin/pip install --no-deps --require-hashes --only-binary=:all:"
        f" --no-index --find-links /opt/gpuenv/{WHEELS} -r /opt/gpuenv/{REQUIREMENTS}"
        if recipe.offline
        else f"{PREFIX}/bin/pip install --no-deps --require-hashes --only-binary=:all:"
        f" -r /opt/gpuenv/{REQUIREMENTS}"
    )
    lines = [
        f"# {lockfile_name}: {recipe.stack}; Python {recipe.python}",
        "# Made by `gpuenv export`: every wheel is the lockfile's, checked against its sha256.",
        f"FROM {base}",
        f"COPY {REQUIREMENTS} {CHECK} /opt/gpuenv/",
        *([f"COPY {WHEELS}/ /opt/gpuenv/{WHEELS}/"] if recipe.offline else []),
        f"RUN python{recipe.python} -m venv {PREFIX} || python3 -m venv {PREFIX}",
        f"RUN {install}",
        f"RUN {PREFIX}/bin/python /opt/gpuenv/{CHECK} {modules}",
        f'ENV PATH="{PREFIX}/bin:$PATH" VIRTUAL_ENV="{PREFIX}"',
        "CMD " + json.dumps([f"{PREFIX}/bin/python", f"/opt/gpuenv/{CHECK}", *run_check]),
    ]
    return "\n".join(lines) + "\n"
