"""What a container recipe of a lockfile holds, whatever builds it: the lockfile's wheels as a
requirements list pip checks against the lockfile's sha256 (`--require-hashes`, no
dependencies, wheels only), or with a wheelhouse every file copied into the build context and
installed offline; and a check that imports each framework (on the GPU with `--gpu`)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.lock.model import LockedEnvironment

REQUIREMENTS = "gpuenv-requirements.txt"
CHECK = "gpuenv-check.py"
WHEELS = "wheels"  # the wheelhouse's files, in the build context
PREFIX = "/opt/gpuenv/env"  # the environment inside the image


class ExportError(GpuenvError, ValueError):
    """A lockfile or an environment that cannot be exported as asked (exit 2)."""

    exit_code = USAGE_EXIT


@dataclass(frozen=True)
class Recipe:
    """The parts of a build context: the files to write beside the recipe, and facts the recipe
    itself names."""

    python: str  # X.Y
    files: dict[str, str]  # name in the context -> its text
    offline: bool  # the wheels are in the context
    frameworks: tuple[str, ...]
    on_gpu: bool
    stack: str


def recipe_of(locked: LockedEnvironment, wheelhouse: Optional[Path]) -> Recipe:
    """The recipe's parts; a lockfile with conda packages is refused (pip installs wheels)."""
    if locked.conda:
        names = ", ".join(sorted(r["name"] for r in locked.conda)[:5])
        raise ExportError(
            f"{locked.path} has {len(locked.conda)} conda packages ({names}, ...): a container"
            " export installs wheels with pip; install this lockfile with `gpuenv install`"
            " inside the image instead"
        )
    if not locked.platform.startswith("linux-"):
        raise ExportError(
            f"{locked.path} is for {locked.platform}: containers run Linux; lock for the image"
            f" (`gpuenv lock ... --os linux`)"
        )
    plan = locked.plan
    return Recipe(
        python=plan.python,
        files={
            REQUIREMENTS: requirements_text(locked, offline=wheelhouse is not None),
            CHECK: check_script(),
        },
        offline=wheelhouse is not None,
        frameworks=tuple(plan.frameworks),
        on_gpu=plan.accelerator == "cuda",
        stack=", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items()),
    )


def requirements_text(locked: LockedEnvironment, *, offline: bool) -> str:
    """One line per wheel with its sha256: by name and version where the file is found on an
    index (a portable entry: the image's own index settings, PIP_INDEX_URL, apply) or in the
    wheelhouse, by URL otherwise; the plan's framework indexes as extra indexes."""
    lines = [f"# {locked.path.name}: every wheel, hash-checked (pip --require-hashes)"]
    if not offline:
        indexes = sorted({p.index for p in locked.plan.pip if p.index})
        lines += [f"--extra-index-url {url}" for url in indexes]
    from gpuenv.index.origin import carries_secret

    for entry in sorted(locked.pip, key=lambda p: p.name):
        by_name = offline or entry.portable
        if not by_name and carries_secret(entry.url):  # a build context is shared: no secrets
            raise ExportError(
                f"{entry.name}'s URL carries credentials: a recipe never holds them; export with"
                " --from a wheelhouse (`gpuenv fetch`), or lock portably (`gpuenv lock --portable`)"
            )
        pin = f"{entry.name}=={entry.version}" if by_name else f"{entry.name} @ {entry.url}"
        lines.append(f"{pin} --hash=sha256:{entry.sha256}")
    return "\n".join(lines) + "\n"


def copy_wheels(locked: LockedEnvironment, wheelhouse: Path, context: Path) -> list[str]:
    """The lockfile's wheels from the wheelhouse into `context/wheels`, each checked against the
    lockfile's sha256 on the way (gpuenv.envs.artifacts' checks: plain names, regular files)."""
    from gpuenv.envs.artifacts import artifacts_of, gather
    from gpuenv.envs.sources import file_url_path

    target = context / WHEELS
    target.mkdir(parents=True, exist_ok=True)
    # pip-only with a wheelhouse: gather only checks and names the files, it writes nothing
    sources = gather(artifacts_of(locked), cache=target, wheelhouse=wheelhouse)
    copied = []
    for source in sources:
        path = file_url_path(source.url)
        _check_hash(path, source.artifact.sha256 or "")
        shutil.copyfile(path, target / source.artifact.filename)
        copied.append(source.artifact.filename)
    return copied


def _check_hash(path: Path, expected: str) -> None:
    from gpuenv.fs.file_hash import file_sha256

    if file_sha256(path) != expected:
        raise ExportError(
            f"{path} does not match the lockfile's sha256 {expected}: the wheelhouse holds"
            " another file; fill it again with `gpuenv fetch`"
        )


def check_script() -> str:
    """Imports each framework named on its command line, prints its version; with --gpu, also
    fails unless it sees a GPU. Runs with the image's environment, with no gpuenv there."""
    return '''"""gpuenv's check of a container's environment: import each framework; with --gpu, see a GPU."""
import importlib
import sys

GPU_SEEN = {
    "torch": lambda m: m.cuda.is_available(),
    "tensorflow": lambda m: bool(m.config.list_physical_devices("GPU")),
    "jax": lambda m: any(d.platform == "gpu" for d in m.devices()),
}

gpu = "--gpu" in sys.argv
failed = []
for name in [a for a in sys.argv[1:] if a != "--gpu"]:
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the answer
        failed.append(f"{name}: cannot be imported ({exc})")
        continue
    print(f"ok  {name} {getattr(module, '__version__', '?')}")
    if gpu and name in GPU_SEEN and not GPU_SEEN[name](module):
        failed.append(f"{name}: no GPU visible (run the container with the GPU: --gpus all)")
for line in failed:
    print(f"FAILED {line}", file=sys.stderr)
sys.exit(1 if failed else 0)
'''


def write_context(context: Path, recipe_name: str, recipe_text: str, recipe: Recipe) -> list[Path]:
    """The recipe and its files into `context` (made if missing), each written atomically."""
    from gpuenv.fs.atomic_write import atomic_write_text

    context.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in {recipe_name: recipe_text, **recipe.files}.items():
        atomic_write_text(context / name, text)
        written.append(context / name)
    return written


def modules_of(recipe: Recipe) -> str:
    """The modules the check imports (framework names are their module names)."""
    from gpuenv.envs.backends import FRAMEWORK_MODULES

    return " ".join(FRAMEWORK_MODULES.get(f, f) for f in recipe.frameworks)
