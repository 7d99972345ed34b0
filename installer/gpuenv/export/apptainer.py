"""`gpuenv export LOCKFILE --to apptainer -o DIR`: an Apptainer definition (with its
requirements list and check beside it) that installs exactly that lockfile's wheels, hash-checked
by pip, imports each framework in %post, and checks the GPU in %test (`apptainer test --nv`)."""

from __future__ import annotations

from gpuenv.export.recipe import CHECK, PREFIX, REQUIREMENTS, WHEELS, Recipe, modules_of

FILE = "gpuenv.def"


def definition(recipe: Recipe, base: str, lockfile_name: str) -> str:
    modules = modules_of(recipe)
    offline = f" --no-index --find-links /opt/gpuenv/{WHEELS}" if recipe.offline else ""
    files = [f"    {REQUIREMENTS} /opt/gpuenv/{REQUIREMENTS}", f"    {CHECK} /opt/gpuenv/{CHECK}"]
    if recipe.offline:
        files.append(f"    {WHEELS} /opt/gpuenv/{WHEELS}")
    gpu = " --gpu" if recipe.on_gpu else ""
    return "\n".join(
        [
            "Bootstrap: docker",
            f"From: {base}",
            "",
            "%labels",
            f"    gpuenv.lockfile {lockfile_name}",
            f"    gpuenv.stack {recipe.stack}",
            "",
            "%files",
            *files,
            "",
            "%post",
            f"    python{recipe.python} -m venv {PREFIX} || python3 -m venv {PREFIX}",
            f"    {PREFIX}/bin/pip install --no-deps --require-hashes --only-binary=:all:{offline}"
            f" -r /opt/gpuenv/{REQUIREMENTS}",
            f"    {PREFIX}/bin/python /opt/gpuenv/{CHECK} {modules}",
            "",
            "%environment",
            f"    export PATH={PREFIX}/bin:$PATH VIRTUAL_ENV={PREFIX}",
            "",
            "%test",
            f"    {PREFIX}/bin/python /opt/gpuenv/{CHECK} {modules}{gpu}",
            "",
        ]
    )
