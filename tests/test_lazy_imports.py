"""The quick commands import only what they use (issue 13: resolve and the setup no-op are
measured against the interpreter's own start-up). Each check runs in a fresh interpreter."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

LAB = """[lab]
name = "l"

[stack]
requirements = ["jax"]
{packages}
[[class]]
name = "cpu"
os = "linux"
gpu = "none"
"""


def _modules_after(code: str, names: tuple[str, ...], env: dict[str, str]) -> list[str]:
    """Which of `names` are imported once `code` has run in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {names!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    return list(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_resolve_from_the_cached_knowledge_base_imports_no_parser_nor_process_tools(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "cache")}
    resolve = (
        "from gpuenv.cli import main\n"
        "try:\n"
        "    main(['resolve', 'torch', 'tensorflow', '--gpu', '8.6', '--driver', '535.183.01',"
        " '--os', 'linux', '--json'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
    )
    heavy = ("tomllib", "tomli", "shutil", "subprocess", "tempfile", "hashlib")
    # the first run hashes and parses the TOML files and writes the cache
    first = _modules_after(resolve, heavy, env)
    assert "hashlib" in first
    assert "tomllib" in first or sys.version_info < (3, 11)
    # the cached run needs none of them: the files' stamps find the parsed knowledge base
    assert _modules_after(resolve, heavy, env) == []
    # nor what other commands need: the network, lockfiles, environments, probes
    assert _modules_after(resolve, OTHER_COMMANDS, env) == []
    # nor pathlib (with urllib.parse and ipaddress, 5 ms) or pickle's module: the cache and
    # the knowledge base are read through text paths and pickle's own loader
    assert _modules_after(resolve, ("pathlib", "pickle", "signal"), env) == []


def test_the_early_uv_of_a_lock_starts_before_the_heavy_imports(tmp_path: Path) -> None:
    """`gpuenv lock` starts uv on last time's request first thing (lock.last_request): what
    is imported by then delays uv, so it is os, zlib and marshal, nothing more (the program's
    own first imports: tests/test_spawn.py)."""
    cache = tmp_path / "cache"
    env = {**os.environ, "GPUENV_CACHE_DIR": str(cache), "GPUENV_HOME": str(tmp_path / "home")}
    script = tmp_path / "uv.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    argv = ["lock", "jax", "--no-gpu"]
    request = {
        "uv": str(script),
        "project": "[project]\n",
        "constraints": "",
        "options": [],
        "index_args": [],
        "cutoff": [],
        "exclude_newer": None,
        "requirements": ["jax==0.10.2"],
        "routed": [],
        "sources": "the default index",
    }
    code = (
        "import marshal, os\n"
        "from gpuenv import cache\n"
        "from gpuenv.lock import last_request as lr\n"
        f"cache.write_entry(lr.KIND, lr._file(lr.command_key({argv!r})),"
        f" marshal.dumps({request!r}))\n"
        "import sys\n"
        "gone = [m for m in ('pathlib', 'tempfile', 'shutil', 'dataclasses', 'hashlib') if m in sys.modules]\n"
        "for m in gone: del sys.modules[m]\n"  # write_entry's own imports: not the early path's
        f"lr.start_early({argv!r})\n"
        "assert lr._early is not None and lr._early[1] is not None, 'uv was not started'\n"
        "lr._early[1][1].communicate()\n"
    )
    heavy = ("pathlib", "tempfile", "shutil", "dataclasses", "hashlib", "gpuenv.lock.pypi")
    assert _modules_after(code, heavy, env) == []


# What `resolve` never needs: each is a library or a part of gpuenv that other commands use.
OTHER_COMMANDS = (
    "conda_lock",
    "pydantic",
    "rattler",
    "requests",
    "urllib3",
    "yaml",
    "platformdirs",
    "ssl",
    "socket",
    "http.client",
    "urllib.request",
    "email",
    "logging",
    "asyncio",
    "concurrent.futures",
    "zipfile",
    "tarfile",
    "shlex",
    "packaging.requirements",
    "packaging.markers",
    "packaging.tags",
    "gpuenv.detect",
    "gpuenv.lock",
    "gpuenv.envs",
    "gpuenv.verify",
    "gpuenv.doctor",
    "gpuenv.lab.load",
)


def test_a_lab_without_packages_is_read_without_packaging_requirements(tmp_path: Path) -> None:
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB.format(packages=""))
    code = (
        "from pathlib import Path\n"
        "from gpuenv.lab.load import load_lab\n"
        "from gpuenv.resolve.packages import merge_packages\n"
        "from gpuenv.recipes import load_knowledge_base\n"
        f"lab = load_lab(Path({str(lab)!r}), load_knowledge_base())\n"
        "assert merge_packages(lab.packages, ()) == ()\n"
    )
    names = ("packaging.requirements",)
    assert _modules_after(code, names, dict(os.environ)) == []
    # with packages, they are parsed (and checked) as before
    lab.write_text(LAB.format(packages='packages = ["pandas>=2"]\n'))
    with_packages = code.replace("== ()", "== ('pandas>=2',)")
    assert _modules_after(with_packages, names, dict(os.environ)) == list(names)


def test_the_program_spares_the_last_collection_and_a_caller_of_main_keeps_it(
    tmp_path: Path,
) -> None:
    """`gpuenv` as a program freezes what it made before exiting (the interpreter's final
    collection would walk every object, the parsed knowledge base's too); main() called with
    arguments, as tests and embedding code do, leaves the caller's collector alone."""
    env = {**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "cache")}
    args = ["resolve", "torch", "--gpu", "8.6", "--os", "linux", "--json"]
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
        "from gpuenv.cli import main\n"
        "{call}\n"
    )
    for call, frozen in (
        (f"sys.argv = ['gpuenv', *{args!r}]; main()", True),
        (f"main({args!r})", False),
    ):
        done = subprocess.run(
            [sys.executable, "-c", probe.format(call=call)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert '"accelerator": "cuda"' in done.stdout
        count = int(done.stderr.split("frozen ")[-1].split()[0])
        assert (count > 0) is frozen, (call, count)


def test_the_plan_and_lockfile_types_load_without_the_resolver(tmp_path: Path) -> None:
    """install, verify, the store and the setup no-op read plans and lockfiles: the resolver's
    rules, candidates and explanations are not theirs to load; the package's names still load on
    first use."""
    env = {**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "cache")}
    resolver = (
        "gpuenv.resolve.candidates",
        "gpuenv.resolve.explain",
        "gpuenv.resolve.resolver",
        "gpuenv.resolve.rules",
    )
    readers = (
        "import gpuenv.resolve.plan, gpuenv.lock.conda_lock.write, gpuenv.envs.artifacts,"
        " gpuenv.setup.workflow, gpuenv.commands.setup"  # the setup no-op's modules
    )
    assert _modules_after(readers, resolver, env) == []
    users = "from gpuenv.resolve import resolve, ResolveError, Plan"
    assert _modules_after(users, resolver, env) == list(resolver)


def test_the_program_walks_its_objects_once_or_not_at_all(tmp_path: Path) -> None:
    """The collector at Python's default pace walked the modules, record classes and parsed
    knowledge base of `gpuenv resolve` 45 times (7-10 ms of it); the program collects far less
    often. A caller of gpuenv's library keeps its own pace."""
    env = {**os.environ, "GPUENV_CACHE_DIR": str(tmp_path / "cache")}
    argv = ["gpuenv", "resolve", "torch", "tensorflow", "--gpu", "8.6", "--os", "linux"]
    code = (
        "import gc, sys\n"
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and runs.append(1))\n"
        f"sys.argv = {argv!r}\n"
        "default = gc.get_threshold()\n"
        "import gpuenv.cli\n"  # the library: the pace it found
        "assert gc.get_threshold() == default, gc.get_threshold()\n"
        "import atexit\n"
        "atexit.register(lambda: sys.stderr.write(f'collections: {len(runs)}\\n'))\n"
        "from gpuenv._entry import main\n"
        "runs.clear()\n"
        "main()\n"
    )
    for _ in range(2):  # the first run parses the knowledge base and writes its cache
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("collections: ")][-1]
    assert int(line.split()[1]) <= 2, line
