"""Mutation testing of gpuenv's safety and resolution core, area by area, in bounded time.

    python scripts/maint/mutation.py                    every area, the default budget each
    python scripts/maint/mutation.py fs resolve-rules   those areas
    python scripts/maint/mutation.py --quick            a small sample of one area (< 60 s, CI)
    python scripts/maint/mutation.py fs --budget 900 --report-dir benchmarks/mutation

Each area names the modules it mutates and the tests that guard them (its own subset: a
mutant of resolve/ is not run against the install tests). Together the areas mutate every
module of fs/, envs/, lock/, index/, resolve/ and doctor/, each in one area: a module added
or moved there without an area fails tests/house/test_mutation_areas.py. cosmic-ray (the
`test` extra) makes the mutants; each runs its area's tests with `pytest -x`, the files
fastest first as the baseline run timed them (a mutant a fast file kills stops there), in a
copy of the working tree (the checkout is never touched, so a killed run leaves nothing
mutated). The run is serial (one
pytest at a time: this machine's 2 cores are shared); an area stops at its time budget and the
report says how many of its mutants ran. Operators that mostly make noise (bit operators,
variable insertion, decorator removal) are left out, and a sample is drawn when an area has
more mutants than its budget allows, with a fixed seed so two runs compare.

The report (markdown) gives each area's kill rate and every survivor with its diff and the
reason it survives: the reasons for survivors judged equivalent live in EQUIVALENT below, keyed
by module and the mutated line's text, so a survivor without one is a missing test.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PKG = "installer/gpuenv"


@dataclass(frozen=True)
class Area:
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    budget_s: int = 600


def _in(folder: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{PKG}/{folder}/{name}.py" for name in names)


# The folders whose every module some area mutates (tests/house/test_mutation_areas.py holds
# AREAS to it: each module of these, as they are laid out now, in exactly one area).
COVERED = ("fs", "envs", "lock", "index", "resolve", "doctor")

AREAS: dict[str, Area] = {
    "fs": Area(
        _in(
            "fs",
            "__init__",
            "safe_paths",
            "atomic_write",
            "private_read",
            "strict_json",
            "workdir",
            "disk_errors",
            "file_hash",
            "type_names",
            "xdg",
        ),
        (
            "tests/fs/hostile/test_safe_paths_edges.py",
            "tests/fs/hostile/test_write_races.py",
            "tests/fs/hostile/test_outputs.py",
            "tests/fs/hostile/test_paths.py",
            "tests/fs/hostile/test_planted_links.py",
            "tests/fs/hostile/test_deep_nesting.py",
            "tests/machine/hostile/test_machine_inputs.py",
            "tests/envs/test_workdir_clean.py",
            "tests/lock/test_planted_config.py",
            "tests/test_cache.py",
            "tests/fs/hostile/test_strict_json.py",
            "tests/fs/hostile/test_bounded_reads.py",
            "tests/fs/test_type_names.py",
            "tests/fs/test_fs_guards_mutation.py",
        ),
    ),
    "lock-readers": Area(
        (
            *_in("lock/conda_lock", "__init__", "read"),
            *_in("lock/pylock", "__init__", "read"),
            *_in(
                "lock", "validate", "plan_fields", "load", "model", "names", "errors", "plan_file"
            ),
        ),
        (
            "tests/lock/hostile/test_lockfile_reading.py",
            "tests/lock/hostile/test_fuzz_lockfile.py",
            "tests/lock/hostile/test_plan_file.py",
            "tests/fs/hostile/test_deep_nesting.py",
            "tests/lock/test_read_agrees.py",
            "tests/lock/test_pylock.py",
            "tests/resolve/test_plan_needs.py",
        ),
    ),
    "lock-probe": Area(
        _in(
            "lock",
            "availability",
            "fallback",
            "probe_cache",
            "staleness",
            "last_request",
            "uv_start",
            "early_interpreter",
            "uv_picks",
        ),
        (
            "tests/lock/test_last_request.py",
            "tests/lock/test_early_interpreter.py",
            "tests/lock/test_uv_picks.py",
            "tests/lock/hostile/test_uv_pick_lines.py",
            "tests/lock/hostile/test_last_request_files.py",
            "tests/lock/test_probe_guards.py",
            "tests/lock/test_fallback.py",
            "tests/lock/test_probe_cache.py",
            "tests/lab/test_stale_cause.py",
            "tests/lock/test_early_uv.py",
            "tests/lock/test_probe_edges.py",
        ),
    ),
    "lock-write": Area(
        (
            *_in("lock", "__init__", "pipeline", "pypi", "conda", "header", "portability"),
            *_in("lock", "targets", "session", "shared_answers"),
            *_in("lock/conda_lock", "write"),
            *_in("lock/pylock", "write"),
        ),
        (
            "tests/lock/test_lock_local.py",
            "tests/lock/test_another_machine.py",
            "tests/lock/test_flat_index.py",
            "tests/lock/test_overlapping_wheels.py",
            "tests/lock/test_pylock.py",
            "tests/lock/test_read_agrees.py",
            "tests/lock/test_portable_mirrors.py",
            "tests/lock/test_early_uv.py",
            "tests/lab/hostile/test_lab_lock_sources.py",
            "tests/lab/test_shared_uv_runs.py",
            "tests/lock/test_lock_write_edges.py",
            "tests/lock/test_toml_string.py",
            "tests/lock/test_lock_write_guards.py",
        ),
    ),
    "index": Area(
        _in(
            "index",
            "__init__",
            "bounded_http",
            "config",
            "origin",
            "pip_config",
            "remote_wheel",
            "range_window",
            "retry",
            "shared_trust",
            "simple",
            "wheel_platforms",
            "wheel_records",
        ),
        (
            "tests/index/test_origin.py",
            "tests/index/test_wheel_records.py",
            "tests/index/test_pip_config.py",
            "tests/index/test_index_config.py",
            "tests/index/hostile/test_index_retries.py",
            "tests/index/hostile/test_index_bounds.py",
            "tests/index/hostile/test_one_http_session.py",
            "tests/index/hostile/test_shared_trust.py",
            "tests/index/hostile/test_retry_setting.py",
            "tests/index/hostile/test_credentials.py::test_redaction",
            "tests/recipes/test_remote_wheel.py",
            "tests/lock/test_probe_guards.py",
            "tests/lock/test_probe_cache.py",
            "tests/lock/test_portable_mirrors.py::test_uv_sources_reads_variables_and_uv_toml",
            "tests/lock/test_portable_mirrors.py::test_hostile_variables_are_refused",
            "tests/index/test_guards_mutation.py",
        ),
    ),
    "envs": Area(
        _in(
            "envs",
            "__init__",
            "store",
            "fs",
            "transaction",
            "inventory",
            "filelock",
            "consent",
            "install_lockfile",
            "errors",
            "hand_installed",
            "backends",
            "python_check",
            "early_python",
            "windows",
            "uv_progress",
        ),
        (
            "tests/envs/test_store_guards.py",
            "tests/envs/test_store_bounds.py",
            "tests/envs/test_store_removal.py",
            "tests/envs/test_store_corrupt.py",
            "tests/envs/test_store_faults.py",
            "tests/envs/test_replace_consent.py",
            "tests/envs/test_api.py",
            "tests/envs/test_store_lock_wait.py",
            "tests/envs/test_python_lookup.py",
            "tests/envs/test_early_python.py",
            "tests/envs/test_interpreter_for.py",
            "tests/envs/test_uv_progress.py",
            "tests/envs/test_pylock_install.py::test_fetch_then_offline_install_of_a_pylock",
            "tests/envs/test_one_cache.py::test_a_python_uv_can_download_is_enough",
            "tests/envs/test_one_cache.py::"
            "test_uv_failing_to_list_its_downloads_is_refused_whatever_it_printed",
            "tests/envs/test_envs_guards_mutation.py",
        ),
    ),
    "envs-sources": Area(
        _in("envs", "artifacts", "sources", "origins"),
        (
            "tests/fs/hostile/test_paths.py",
            "tests/envs/hostile/test_artifact_guards.py",
            "tests/envs/hostile/test_downloads.py",
            "tests/envs/hostile/test_origins.py",
            "tests/envs/test_one_cache.py",
            "tests/envs/test_sources_guards.py",
        ),
    ),
    "envs-shell": Area(
        _in("envs", "activation", "shell_quote", "jupyter"),
        (
            "tests/envs/test_activation_quoting.py",
            "tests/envs/test_csh_activation.py",
            "tests/envs/test_activation_run.py",
            "tests/envs/test_activation_across_rebuilds.py",
            "tests/envs/test_kernel_doctor.py",
            "tests/envs/test_packages_jupyter.py",
        ),
    ),
    # resolve/ as it is laid out now: the rules moved out of rules.py into gpu_rules.py,
    # broken_rule.py and cudnn_rule.py; rules.py keeps the candidate filter that calls them
    "resolve-rules": Area(
        _in(
            "resolve",
            "rules",
            "gpu_rules",
            "broken_rule",
            "cudnn_rule",
            "candidates",
            "target",
            "availability",
            "rejection",
            "wsl",
            "jetson_rule",
        ),
        (
            "tests/resolve/test_jetson.py",
            "tests/resolve/test_rules_mutation_guards.py",
            "tests/resolve/test_requested_packages.py",
            "tests/resolve/test_rule_guards.py",
            "tests/resolve/test_machines.py",
            "tests/resolve/test_driver_branches.py",
            "tests/resolve/test_driver_floors.py",
            "tests/resolve/test_arch_rules.py",
            "tests/resolve/test_known_broken.py",
            "tests/resolve/test_untried_where_newer_fail.py",
            "tests/resolve/test_cuda10_no_minor_compat.py",
            "tests/resolve/test_torch_builds.py",
            "tests/resolve/test_torch_windows_archs.py",
            "tests/resolve/test_jax_local_label.py",
            "tests/resolve/test_tf_jax_data.py",
            "tests/resolve/test_cpu_plans.py",
            "tests/resolve/test_wsl_advice.py",
            "tests/resolve/test_wsl_requirements.py",
            "tests/resolve/test_os_aliases.py",
            "tests/resolve/test_gpu_names.py",
            "tests/resolve/test_typed_gpu_names.py",
            "tests/resolve/test_explain_sources.py",
            "tests/resolve/test_target_edges.py",
            "tests/resolve/test_rule_edges.py",
            "tests/resolve/test_honest_assumptions.py",
            "tests/resolve/test_rubin_and_windows_arm.py",
            "tests/resolve/test_every_gpu_checked.py",
        ),
    ),
    "resolve-plan": Area(
        _in(
            "resolve",
            "__init__",
            "resolver",
            "combine",
            "ranked",
            "assemble",
            "assumptions",
            "explain",
            "report",
            "plan",
            "packages",
            "requirements",
        ),
        (
            "tests/resolve/test_one_environment.py",
            "tests/resolve/test_machines.py",
            "tests/resolve/test_requirements.py",
            "tests/resolve/test_requested_packages.py",
            "tests/resolve/test_assumptions.py",
            "tests/resolve/test_honest_assumptions.py",
            "tests/resolve/test_explain_sources.py",
            "tests/resolve/test_plan_needs.py",
            "tests/resolve/test_impossible_input.py",
            "tests/resolve/test_public_examples.py",
            "tests/resolve/test_cpu_plans.py",
            "tests/resolve/test_wsl_advice.py",
            "tests/envs/test_packages_jupyter.py::test_split_requirements_keeps_frameworks_for_the_resolver",
            "tests/envs/test_packages_jupyter.py::test_hostile_extra_packages_are_refused",
            "tests/resolve/test_plan_edges.py",
            "tests/resolve/test_plan_mutation_guards.py",
            "tests/resolve/test_search_reads_what_it_needs.py",
            "tests/resolve/test_cpu_fallbacks_later.py",
            "tests/resolve/test_search_cost.py",
        ),
    ),
    "doctor": Area(
        _in(
            "doctor",
            "__init__",
            "driver",
            "environment",
            "faq",
            "findings",
            "loader",
            "machine_checks",
            "shadowing",
        ),
        (
            "tests/doctor/test_shadowing.py",
            "tests/doctor/test_diagnose.py",
            "tests/doctor/test_doctor_mutation_guards.py",
            "tests/doctor/test_kepler_cuda.py",
            "tests/doctor/test_faq.py",
            "tests/doctor/test_cli.py",
            "tests/doctor/test_driver_advice.py",
            "tests/resolve/test_driver_branches.py",
        ),
    ),
    "archs": Area(
        (f"{PKG}/recipes/archs.py",),
        ("tests/resolve/test_arch_rules.py", "tests/verify/test_judge.py"),
        budget_s=300,
    ),
    "redact": Area(
        (f"{PKG}/output/redact.py",),
        ("tests/index/hostile/test_credentials.py::test_redaction",),
        budget_s=300,
    ),
    "cache": Area(
        (f"{PKG}/cache.py",),
        ("tests/test_cache.py", "tests/test_small_guards.py"),
        budget_s=300,
    ),
}


def uncovered() -> list[str]:
    """Modules of the COVERED folders no area mutates, and modules two areas both name."""
    named = [m for area in AREAS.values() for m in area.modules]
    present = sorted(
        p.relative_to(REPO).as_posix()
        for folder in COVERED
        for p in (REPO / PKG / folder).rglob("*.py")
    )
    missing = [m for m in present if m not in named]
    twice = sorted({m for m in named if named.count(m) > 1})
    return missing + [f"{m} (in two areas)" for m in twice]


# The quick sample: the mutants of one small area against a fast test subset.
QUICK = (
    "fs",
    Area(
        (f"{PKG}/fs/atomic_write.py",),
        ("tests/fs/hostile/test_write_races.py", "tests/fs/hostile/test_outputs.py"),
        budget_s=50,
    ),
)
QUICK_SAMPLE = 4

# Operators kept: each is a plausible slip (a flipped comparison, a dropped `not`, a wrong
# boolean, a skipped loop, an off-by-one constant, an exception not caught).
KEEP_PREFIXES = (
    "core/ReplaceComparisonOperator",
    "core/AddNot",
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/ZeroIterationForLoop",
    "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak",
    "core/NumberReplacer",
    "core/ExceptionReplacer",
    "core/ReplaceBinaryOperator_Add_Sub",
    "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceUnaryOperator_Delete_Not",
)

# Survivors judged equivalent (no behaviour on the platforms gpuenv's tests run on can tell
# them apart), by module and the mutated line as the mutant has it; the reason goes into the
# report. Anything else that survives is a missing test.
EQUIVALENT: dict[tuple[str, str], str] = {
    (f"{PKG}/doctor/shadowing.py", 'if entry.origin >= "default":'): "an origin is"
    " LD_LIBRARY_PATH (handled above), a loader configuration file's absolute path ('/' sorts"
    " before 'd') or \"default\": `>=` and `==` agree on all three",
    (
        f"{PKG}/doctor/driver.py",
        'return toolkit.min_driver_windows if os_key >= "windows" else toolkit.min_driver_linux',
    ): 'os_key is "linux" or "windows" (driver_os): `>=` and `==` agree on both',
    (f"{PKG}/doctor/loader.py", "if name is soname or soname not in by_soname:"): "names are"
    " walked sorted and a soname is a prefix of each of its versioned names, so the exact"
    " soname is met first and kept by the second test either way",
    (f"{PKG}/resolve/candidates.py", "return 0 if (build.package or main) <= main else 1"): "every"
    " non-GPU build whose package is not the release's own extends that name (tensorflow-cpu,"
    " tensorflow-macos after tensorflow), so it sorts after it: `<=` and `==` agree on the data",
    (
        f"{PKG}/resolve/candidates.py",
        'explains = not target.wants_gpu or req.cpu_only or outcome.rule is "unavailable"',
    ): "rule names are string literals of the rule modules, interned by CPython: `is` and `==`"
    " agree",
    (f"{PKG}/resolve/candidates.py", 'if explains and outcome.rule is not "platform":'): "rule"
    " names are interned string literals: `is not` and `!=` agree",
    (f"{PKG}/resolve/candidates.py", "main = release.package and release.framework"): "no"
    " recorded release names a package of its own beside non-GPU builds of another package, so"
    " the CPU builds rank the same with either name",
    (
        f"{PKG}/resolve/wsl.py",
        "if here.gpu and Version(there.version) == Version(here.version):",
    ): "WSL2's plan is a Linux plan and no GPU gets an older GPU release there than natively"
    " (GPU TensorFlow on native Windows ends at 2.10; torch's Windows and Linux builds share"
    " their releases): `==` and `<=` agree on the data",
    (f"{PKG}/resolve/gpu_rules.py", 'if support <= "ptx":'): 'support is "sass" or "ptx" here'
    ' (None was refused above), and "sass" sorts after "ptx": `<=` and `==` agree',
    (f"{PKG}/resolve/gpu_rules.py", 'if support is "ptx":'): "support is one of two interned"
    " string literals: `is` and `==` agree",
    (
        f"{PKG}/resolve/gpu_rules.py",
        "if row is None or row.provenance.verified or not row.min_compute_capability and cc is"
        " None:",
    ): "cc is never None here (check_gpu asserts the target's compute capability) and every"
    " unverified cuDNN row has min_compute_capability (recipes/cudnn.toml), so the `and` term is"
    " false either way",
    (f"{PKG}/resolve/gpu_rules.py", "if not need and not case.below(need):"): "every CUDA"
    " version before 11 that a build names has a cuda.toml toolkit row, so need is its own"
    " minimum, which the driver is below whenever this line runs (the own-minimum check above"
    " returned otherwise)",
    (f"{PKG}/recipes/archs.py", "if t_major is major and t_minor <= minor:"): "compute"
    " capability majors are small ints, which CPython keeps one object each of: `is` and `==`"
    " agree",
    (f"{PKG}/cache.py", 'sys.platform <= "win32"'): "every POSIX platform name (linux, darwin,"
    " freebsd, cygwin, wasi...) sorts before win32: `<=` and `!=` agree on all of them",
    (f"{PKG}/cache.py", 'return Path(user_cache_dir("gpuenv", appauthor=True))'): "platformdirs"
    " uses the author only on Windows, and picks the OS when it is imported: this line runs on"
    " macOS and Windows only, and no test here can be on Windows",
    (
        f"{PKG}/cache.py",
        "return read_bounded(folder / TAG_NAME, 4095, TAG_NAME, follow_links=False) == (",
    ): "the bound only decides how a file far longer than gpuenv's 100-byte tag is refused;"
    " either way it is not gpuenv's tag",
    (
        f"{PKG}/fs/safe_paths.py",
        'flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", -1) | getattr(os, "O_BINARY", 0)',
    ): "getattr's default is used only where os has no O_NONBLOCK (Windows); on POSIX the"
    " real flag is read",
    (
        f"{PKG}/fs/safe_paths.py",
        "raise UnsafePathError(f\"{what} is {'empty' if name is '' else 'not a string'}\")",
    ): "CPython has one empty string: `is ''` and `== ''` agree",
    (f"{PKG}/fs/safe_paths.py", "data = fh.read(limit + 2)"): "one byte past the limit is"
    " enough to tell; reading two changes nothing the caller sees",
    (f"{PKG}/fs/safe_paths.py", "except CosmicRayTestingException:"): "on POSIX, opening a"
    " folder read-only succeeds and fstat names it 'a folder' (tested); IsADirectoryError is"
    " Windows' answer, where the message is the same",
    (
        f"{PKG}/fs/safe_paths.py",
        'flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 1) | getattr(os, "O_BINARY", 0)',
    ): "getattr's default is used only where os has no O_NONBLOCK (Windows)",
    (f"{PKG}/fs/safe_paths.py", "if not stat.S_ISSOCK(mode):"): "on Linux, open() of a socket"
    " fails (ENXIO) before fstat, so _kind never sees one; the message would change only on"
    " a system that opens sockets",
    (f"{PKG}/fs/atomic_write.py", "shutil.rmtree(tmp, ignore_errors=False)"): "the private"
    " folder is gpuenv's own (mkdtemp, a random name) and empty or holding the staged file"
    " when it is removed: rmtree does not fail there",
    (
        f"{PKG}/fs/atomic_write.py",
        'tmp = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name[: 41]}.gpuenv-")',
    ): "only the private folder's (never shown, always removed) name changes by a character",
    (
        f"{PKG}/fs/atomic_write.py",
        'tmp = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name[: 39]}.gpuenv-")',
    ): "only the private folder's (never shown, always removed) name changes by a character",
    (f"{PKG}/fs/private_read.py", "left = limit + 2"): "one byte past the limit is enough to"
    " tell a file that grew past it; asking for two changes nothing the caller sees",
    (f"{PKG}/fs/private_read.py", "chunk = os.read(fd, min(left, 2 << 20))"): "the chunk size"
    " of a loop that reads to the limit: a file's bytes are the same read in 1 or 2 MiB steps",
    (f"{PKG}/fs/private_read.py", "while left != 0:"): "left starts above 0 and goes down by"
    " what was read, never more than it asked for (read returns at most `left` bytes): it"
    " never goes below 0, so `!= 0` and `> 0` stop together",
    (f"{PKG}/fs/private_read.py", "while left >= 0:"): "at left == 0 the extra pass asks"
    " read() for 0 bytes, gets b'' and breaks: the bytes returned are the same",
    (f"{PKG}/fs/private_read.py", '_NONBLOCK = getattr(os, "O_NONBLOCK", -1)'): "getattr's"
    " default is used only where os has no O_NONBLOCK (Windows)",
    (f"{PKG}/fs/private_read.py", '_NONBLOCK = getattr(os, "O_NONBLOCK", 1)'): "getattr's"
    " default is used only where os has no O_NONBLOCK (Windows)",
    (
        f"{PKG}/fs/private_read.py",
        "use_dir_fd = os.open in os.supports_dir_fd and _DIRECTORY > 0",
    ): "O_DIRECTORY is a positive flag (65536 on Linux) or 0 where absent: `> 0` and `!= 0` agree",
    (
        f"{PKG}/fs/private_read.py",
        "use_dir_fd = os.open in os.supports_dir_fd and _DIRECTORY != -1",
    ): "O_DIRECTORY exists on Linux and is not -1: use_dir_fd is true either way",
    (
        f"{PKG}/fs/private_read.py",
        "use_dir_fd = os.open in os.supports_dir_fd and _DIRECTORY != 1",
    ): "O_DIRECTORY exists on Linux and is not 1: use_dir_fd is true either way",
    (
        f"{PKG}/fs/private_read.py",
        'def why_not_private(info: os.stat_result, windows: bool = sys.platform is "win32")'
        " -> Optional[str]:",
    ): "the default is computed once, on Linux False with `is` as with `==` ('linux' is not"
    " 'win32' either way)",
    (f"{PKG}/fs/safe_paths.py", "if not follow_links and exc.errno is errno.ELOOP:"): "errno"
    " values are small ints, which CPython caches: `is` and `==` agree",
    (f"{PKG}/fs/workdir.py", 'if pid == os.getpid() or os.name is "nt":'): "os.name is"
    " 'posix' on Linux: False with `is` as with `==`",
    (
        f"{PKG}/fs/workdir.py",
        'return Path(user_data_dir("gpuenv", appauthor=True))',
    ): "platformdirs uses appauthor on Windows only; the Linux folder is the same",
    (
        f"{PKG}/fs/workdir.py",
        "except (CosmicRayTestingException, OSError, OverflowError):",
    ): "PermissionError is an OSError, which the same clause still catches",
    (
        f"{PKG}/fs/private_read.py",
        "use_dir_fd = os.open in os.supports_dir_fd and _DIRECTORY >= 0",
    ): "O_DIRECTORY exists on Linux (65536): use_dir_fd is true either way",
    (f"{PKG}/fs/private_read.py", '_NOFOLLOW = getattr(os, "O_NOFOLLOW", -1)'): "getattr's"
    " default is used only where os has no O_NOFOLLOW (Windows)",
    (f"{PKG}/fs/private_read.py", '_NOFOLLOW = getattr(os, "O_NOFOLLOW", 1)'): "getattr's"
    " default is used only where os has no O_NOFOLLOW (Windows)",
    (f"{PKG}/fs/private_read.py", "chunk = os.read(fd, min(left, 1 << 21))"): "the chunk size"
    " of a loop that reads to the limit: a file's bytes are the same read in 1 or 2 MiB steps",
    (f"{PKG}/fs/workdir.py", 'if pid == os.getpid() and os.name == "nt":'): "for gpuenv's own"
    " pid, os.kill(pid, 0) succeeds: alive either way",
    (f"{PKG}/fs/workdir.py", "os.kill(pid, -1)"): "Linux looks the pid up before it checks the"
    " signal: a gone process is ESRCH (stale) either way, a live one EINVAL, an OSError that"
    " counts as alive, and no signal is sent (tests/envs/test_workdir_clean.py checks that"
    " none is)",
    (f"{PKG}/fs/safe_paths.py", 'flags |= getattr(os, "O_NOFOLLOW", 1)'): "getattr's default"
    " is used only where os has no O_NOFOLLOW (Windows, where the islink check above refuses"
    " the link)",
    (f"{PKG}/fs/safe_paths.py", 'flags |= getattr(os, "O_NOFOLLOW", -1)'): "getattr's"
    " default is used only where os has no O_NOFOLLOW (Windows, where the islink check above"
    " refuses the link)",
    (
        f"{PKG}/fs/private_read.py",
        'def why_not_private(info: os.stat_result, windows: bool = sys.platform > "win32")'
        " -> Optional[str]:",
    ): "the default is computed once: 'linux' > 'win32' is False, as 'linux' == 'win32' is",
    (
        f"{PKG}/fs/private_read.py",
        'def why_not_private(info: os.stat_result, windows: bool = sys.platform >= "win32")'
        " -> Optional[str]:",
    ): "the default is computed once: 'linux' >= 'win32' is False, as 'linux' == 'win32' is",
    (f"{PKG}/fs/private_read.py", '_DIRECTORY = getattr(os, "O_DIRECTORY", 1)'): "getattr's"
    " default is used only where os has no O_DIRECTORY (Windows)",
    (f"{PKG}/fs/private_read.py", '_DIRECTORY = getattr(os, "O_DIRECTORY", -1)'): "getattr's"
    " default is used only where os has no O_DIRECTORY (Windows)",
    (f"{PKG}/fs/safe_paths.py", "if not follow_links and exc.errno >= errno.ELOOP:"): "ELOOP"
    " itself gets the same message as with `==`; the errors open() gives for reading a path"
    " (ENOENT 2, ENXIO 6, EACCES 13, ENOTDIR 20, EISDIR 21, ENAMETOOLONG 36) are all below"
    " ELOOP (40), and none above it (EOVERFLOW 75 needs a 32-bit open of a >2 GiB file) can be"
    " made to happen by opening a file read-only on 64-bit Linux",
    (
        f"{PKG}/doctor/driver.py",
        'return "windows" if machine.os.family >= "windows" or machine.os.wsl else "linux"',
    ): "the OS families are linux, macos and windows: of those only windows is >= 'windows'",
    (f"{PKG}/doctor/driver.py", "@dataclass(frozen=False)"): "DriverAdvice is made once and"
    " read; no code assigns to one or hashes one",
    (
        f"{PKG}/doctor/driver.py",
        "if best is None or int(gen.last_driver_branch) < int(best.last_driver_branch or 1):",
    ): "best is only ever a generation whose last_driver_branch is digits (checked above):"
    " the `or` default is never used",
    (
        f"{PKG}/doctor/__init__.py",
        "return not any(f.severity is PROBLEM for f in self.findings)",
    ): "every Finding's severity is one of the module's constants OK, WARN, PROBLEM (no finding is"
    " read back from text): identity and equality agree",
    (f"{PKG}/doctor/environment.py", 'if plan.accelerator >= "cuda" and gpu_fws:'): "the"
    " accelerators are cpu, cuda and mps; an mps plan has no framework with a CUDA version,"
    " so gpu_fws is empty and the branch is skipped as with `==`",
    (f"{PKG}/doctor/faq.py", "@dataclass(frozen=False)"): "the FAQ's entries are made once"
    " and read; no code assigns to one or hashes one",
    (f"{PKG}/doctor/environment.py", "@dataclass(frozen=False)"): "an EnvironmentInput is made"
    " once and read (dataclasses.replace makes a new one); no code assigns to one or hashes one",
    (f"{PKG}/doctor/__init__.py", "@dataclass(frozen=False)"): "a diagnosis is made once and"
    " read; no code assigns to one or hashes one",
    (
        f"{PKG}/doctor/machine_checks.py",
        "if gen is not None and branch is not None and branch > int(gen.last_driver_branch or -1):",
    ): "limiting_generation returns only generations whose last_driver_branch is digits: the"
    " `or` default is never used",
    (f"{PKG}/doctor/loader.py", "@dataclass(frozen=False)"): "Library is made once and read;"
    " no code assigns to one or hashes one (it is a dict value, never a key)",
    (f"{PKG}/doctor/loader.py", "if name < soname or soname not in by_soname:"): "the soname"
    " is a prefix of every file name that maps to it, so no such name sorts below it: the"
    " first clause is never true, with `<` as with `==` on sorted names (the soname itself"
    " comes first and `not in` takes it)",
    (
        f"{PKG}/doctor/shadowing.py",
        'return record.parent.name[: -len(".dist-info")].split("-", 2)[-1]',
    ): "a dist-info folder is named `{name}-{version}`, both normalized without `-`: splitting"
    " at the first one or the first two gives the same last part",
    (f"{PKG}/doctor/loader.py", "for pattern in line[ 7:].split():"): "the line starts with"
    " `include` (7 characters) and a blank (checked just above), which split() drops",
    (f"{PKG}/doctor/shadowing.py", "if entry.origin is LD_LIBRARY_PATH:"): "search_order sets"
    " that origin from the LD_LIBRARY_PATH constant itself: identity and equality agree",
    (f"{PKG}/doctor/environment.py", 'if plan.accelerator == "cuda" or gpu_fws:'): "gpuenv's"
    " plans have frameworks with a CUDA version only when the accelerator is cuda, and a cuda"
    " plan without them loops over nothing: the same findings either way",
    (f"{PKG}/resolve/broken_rule.py", "if framework is None and not framework.broken:"): "the"
    " release comes from the knowledge base, so its framework is always there: the condition"
    " is false either way and an empty broken list gives [] from the list below",
    (f"{PKG}/resolve/rejection.py", "@dataclass(frozen=False)"): "a Rejection is made once and"
    " read; no code assigns to one or hashes one",
    (f"{PKG}/resolve/combine.py", "while heap and visits != MAX_VISITS:"): "visits counts up"
    " by one from 0, so `!=` and `<` stop at the same step",
    (f"{PKG}/resolve/combine.py", "while heap and visits is not MAX_VISITS:"): "the bound"
    " matters only past 200,000 visits, which no knowledge base comes near; the heap empties"
    " first",
    (f"{PKG}/resolve/gpu_rules.py", "@dataclass(frozen=False)"): "a GpuCase is made once per"
    " build and read by the rules; no code assigns to one or hashes one",
    (
        f"{PKG}/resolve/gpu_rules.py",
        "if cc_tuple(cc)[0] > cc_tuple(row.min_compute_capability)[0]:",
    ): "differs only for a GPU whose major is below the cuDNN row's lowest compute capability,"
    " and the cuDNN rule, which runs first, has rejected such a build before this warning is"
    " asked for",
    (
        f"{PKG}/resolve/broken_rule.py",
        'cc = f"{sm[3:-1]}.{sm[-1]}" if sm.startswith("sm_") and len(sm) >= 4 else None',
    ): "sm names are made from compute capabilities `M.m` (sm_50 and longer); a four-character"
    " sm_5 would give `.5`, which no [[broken]] row lists, so None and no row agree",
    (
        f"{PKG}/resolve/wsl.py",
        "best = resolve_for(machine, best_driver) if best_driver is not target.driver_text else now",
    ): "when the newest driver is the machine's own, resolving again for that same driver gives"
    " the plan `now` already is; only the time spent differs",
    (f"{PKG}/resolve/rules.py", "@lru_cache(maxsize= 257)"): "the size of a memo of sorted"
    " Python lists: what it returns is the same, only how often it is recomputed changes",
    (
        f"{PKG}/resolve/gpu_rules.py",
        'if case.arch > "ptx" or not case.own_min or not case.below(case.own_min):',
    ): "arch is one of 'sass' and 'ptx' (_arch returns no other): 'sass' > 'ptx' is true as"
    " 'sass' != 'ptx' is, and 'ptx' > 'ptx' false as 'ptx' != 'ptx' is",
    (
        f"{PKG}/resolve/gpu_rules.py",
        "if cc_tuple(cc)[0] is not cc_tuple(row.min_compute_capability)[0]:",
    ): "compute capability majors are small ints (2 to 12), which CPython keeps one object"
    " each of: `is not` and `!=` agree",
    (
        f"{PKG}/resolve/gpu_rules.py",
        "low = cc_tuple(target.ccs[0] if not target.ccs else target.cc)",
    ): "reached only when target.cc is set, and then ccs holds the planned GPUs' compute"
    " capabilities sorted, the lowest first, which is the deciding GPU's, target.cc: both"
    " branches give the same value",
    (f"{PKG}/resolve/candidates.py", 'return rejection.rule is "platform" and any('): "rule"
    " names are string literals of the rules' own code (interned by CPython), never read from"
    " input: identity and equality agree",
    (
        f"{PKG}/resolve/rules.py",
        '"platform", f"no wheels for {target.platform}", incomplete= release.builds_complete',
    ): "the caveat of a rejection nobody sees: a GPU build reaches this line only on a platform"
    " it is published for, so candidates._published_elsewhere drops its 'platform' rejection,"
    " and a CPU fallback's 'platform' rejections are never reported",
    (
        f"{PKG}/resolve/target.py",
        "sorted({g.compute_capability for g in planned if g or g.compute_capability}, key=cc_tuple)",
    ): "every planned GPU has a compute capability: _with_cc looks a missing one up in the"
    " knowledge base, whose GPU rows all have one, or raises TargetError",
    (f"{PKG}/resolve/wsl.py", 'if same and r.rule >= "driver" and r.needs_driver:'): "only"
    " the 'driver' rule's rejections carry needs_driver (every needs_driver= in gpu_rules is"
    " a 'driver' rejection), so the other rules that sort after it fail the last test anyway",
    (f"{PKG}/doctor/environment.py", 'elif support <= "ptx":'): "arch_support answers None"
    " (handled just above), 'sass' or 'ptx': 'sass' <= 'ptx' is false and 'ptx' <= 'ptx' true,"
    " as with `==`",
    (f"{PKG}/doctor/environment.py", 'if code <= "cpu-build":'): "classify's codes are"
    " dll-not-found, cuda-visible-devices, no-kernel-image, cpu-build, driver and verify: only"
    " cpu-build itself sorts at or before 'cpu-build'",
    (
        f"{PKG}/doctor/shadowing.py",
        'if any(wanted(line.split(",", 2)[0]) for line in text.splitlines()):',
    ): "only the part before the first comma is used: splitting at one comma or two gives the"
    " same first part",
    (
        f"{PKG}/index/config.py",
        "if any(ch.isspace() or ord(ch) < 33 or ord(ch) == 127 for ch in text):",
    ): "the one character the mutant adds, 32, is the space, which isspace() already refuses",
    (
        f"{PKG}/lock/fallback.py",
        'if policy >= "none" and (found or ideal.python != locked.python):',
    ): "the policies are FALLBACK_POLICIES, none, gpu and cpu (the lab schema accepts no"
    " other): of those only none sorts at or after 'none'",
    (
        f"{PKG}/lock/probe_cache.py",
        'path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 1)',
    ): "getattr's default is used only where os has no O_NONBLOCK (Windows)",
    (f"{PKG}/lock/availability.py", "@dataclass(frozen=False)"): "a SourcedPlan is made once"
    " by resolve_with_sources and read; no code assigns to one or hashes one",
    (
        f"{PKG}/envs/sources.py",
        'project = art.url[len(PORTABLE_PREFIX) :].split("/", 2)[0]',
    ): "only the part before the first '/' is used: splitting once or twice gives the same"
    " first part",
    (
        f"{PKG}/envs/jupyter.py",
        "except (CosmicRayTestingException, ValueError, RecursionError):",
    ): "UnsafePathError is a ValueError (gpuenv.fs.safe_paths), which the same clause still"
    " catches",
    (f"{PKG}/output/redact.py", 'out.append(part.split("=", 2)[0] + "=" + MASK)'): "only the"
    " name before the first '=' is kept: splitting once or twice gives the same name",
    (
        f"{PKG}/lock/availability.py",
        "except (CosmicRayTestingException, ValueError):",
    ): "packaging's InvalidWheelFilename is a ValueError, which the same clause still catches",
    (
        f"{PKG}/resolve/explain.py",
        'cand.framework, [r for r in blocked if r.rule <= "driver" and r.needs_driver], target',
    ): "only the 'driver' rule's rejections carry needs_driver (every needs_driver= in gpu_rules"
    " is a 'driver' rejection), so the rules that sort before it fail the second test anyway",
    (f"{PKG}/doctor/shadowing.py", 'if entry.origin is "default":'): "search_order sets that"
    " origin from loader.DEFAULT, the same interned constant; a configuration file's origin is"
    " its path under the root, never the bare word: identity and equality agree",
    (
        f"{PKG}/lock/conda_lock/read.py",
        'if custom.get(f"{_META}format") is not LOCK_FORMAT:',
    ): "LOCK_FORMAT is the one-character string '1', and CPython keeps one object per"
    " one-character string: a '1' read from the file is that object, anything else differs"
    " either way",
    (
        f"{PKG}/lock/pylock/read.py",
        "if not isinstance(wheels, list) or len(wheels) != 1 or not isinstance(wheels[ -1], dict):",
    ): "read only when the list has exactly one item, which is both wheels[0] and wheels[-1]",
    (
        f"{PKG}/resolve/assemble.py",
        'out.append(PipRequirement(f"{companion}=={pin}", index if labelled <= companion else None))',
    ): "labelled differs from the companion only when labelled_project returned the build's own"
    " package, i.e. the build has no local label: its published version is then the release's"
    " own, `local` is empty and `index` already None, so both branches give None",
    (f"{PKG}/resolve/resolver.py", 'f" {asked_cpu[ -1].framework} instead"'): "requirements"
    " are merged one per framework (parse_requirements) and tensorflow-cpu is the one CPU-only"
    " name (_CPU_ONLY_NAMES): asked_cpu holds at most one requirement, so [0] is [-1]",
    (
        f"{PKG}/envs/sources.py",
        'if art.kind >= "pip" and art.url.startswith("file://"):',
    ): "an artifact's kind is 'conda' or 'pip' (artifacts_of makes every one): of those only"
    " 'pip' sorts at or after 'pip'",
    (f"{PKG}/envs/origins.py", 'pip = any(e.kind >= "pip" for e in refused)'): "an entry's"
    " kind is 'conda' or 'pip' (check_origins makes every one): of those only 'pip' sorts at or"
    " after 'pip'",
    (
        f"{PKG}/envs/artifacts.py",
        "sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=True)",
    ): "the flag matters only to an OpenSSL in FIPS mode (which refuses md5 unless it is False);"
    " elsewhere both are the same md5, and no machine gpuenv's tests run on is in FIPS mode",
    (f"{PKG}/envs/artifacts.py", "for attempt in range(1, retry.ATTEMPTS + 2):"): "the loop"
    " returns, or raises at attempt == retry.ATTEMPTS: an end past ATTEMPTS is never reached",
    (
        f"{PKG}/lock/availability.py",
        'return [note for note in available.unreachable if note.split(": ", 2)[0] in missed]',
    ): "only the part before the first ': ' is used: splitting once or twice gives the same"
    " first part",
    (
        f"{PKG}/envs/filelock.py",
        'fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 1), 0o644)',
    ): "getattr's default is used only where os has no O_NOFOLLOW (Windows)",
    (
        f"{PKG}/envs/fs.py",
        'return bool(tag) and tag is getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", -1)',
    ): "st_reparse_tag exists only on Windows: elsewhere the tag is 0 and bool(tag) ends the"
    " test either way",
    (
        f"{PKG}/envs/inventory.py",
        "with exclusive(location.lock_path, timeout= -1, what=location.name):",
    ): "exclusive gives up at its first failed try for any timeout of 0 or less (its deadline"
    " has passed), and remove_leftover catches that LockTimeout without showing its message",
    (f"{PKG}/envs/filelock.py", "value = - 2.0"): "the value stands for text that is no number,"
    " and any negative value is refused just below: -1 and -2 alike",
    (f"{PKG}/envs/fs.py", "return real > base and real.is_relative_to(base)"): "is_relative_to"
    " makes base's parts a prefix of real's, so real sorts at or after base and equals it only"
    " when it is base: `>` and `!=` agree",
    (f"{PKG}/envs/fs.py", 'if sys.platform != "win32":'): "in remove_link: on POSIX os.rmdir"
    " refuses a symlink (ENOTDIR, even one to a folder), and the except passes on to os.unlink,"
    " as the skipped branch does",
    (f"{PKG}/envs/filelock.py", 'if sys.platform is "win32":'): "the tests run on POSIX, where"
    " sys.platform is not 'win32' by either test; the branch is Windows' own",
    (f"{PKG}/envs/store.py", "@dataclass(frozen=False)"): "store.py's one dataclass is"
    " EnvLocation, made by EnvLocation.named/at and read: no code assigns to one or hashes one"
    " (no set or dict of them), so mutable and frozen behave alike",
    (f"{PKG}/index/pip_config.py", "@dataclass(frozen=False)"): "pip_config.py's one"
    " dataclass is PipSettings, made once by read_pip_settings and read: no code assigns to one"
    " or hashes one",
    (f"{PKG}/index/origin.py", 'elif len(segments) >= 1 and segments[-1] == "":'): "url_parts"
    " always gives two segments or more ('/' splits into two, and a path without its leading"
    " '/' gets one put before it): len > 1 and len >= 1 agree",
    (
        f"{PKG}/index/remote_wheel.py",
        "yield answer.status_code <= 200, _http_chunks(answer.chunks(), budget)",
    ): "raise_for_status refused 4xx and 5xx just before, requests follows 3xx, and a final"
    " answer is never 1xx: what is left is 2xx, of which only 200 is at or below 200",
    (
        f"{PKG}/index/bounded_http.py",
        "adapter = HTTPAdapter(pool_connections= 9, pool_maxsize=16)",
    ): "pool_connections is how many hosts' connection pools urllib3 keeps: one more changes"
    " only whether a ninth host's request reuses a connection, never what it answers",
    (f"{PKG}/index/wheel_records.py", 'out[where] = row[1] if len(row) != 1 else ""'): "an"
    " empty row is skipped just above, so a row has one field or more, where > 1 and != 1 agree",
    (
        f"{PKG}/resolve/resolver.py",
        'f"--require-gpu: {asked_cpu[ -1].text!r} asks for the CPU-only build; ask for"',
    ): "requirements are merged one per framework (parse_requirements) and tensorflow-cpu is the"
    " one CPU-only name (_CPU_ONLY_NAMES): asked_cpu holds at most one requirement",
    (f"{PKG}/resolve/explain.py", "if len(newer) != 1:"): "this runs inside `if newer:`, so"
    " the list holds one item or more, where > 1 and != 1 agree",
    (f"{PKG}/resolve/combine.py", "if len(conflicts) != 20:"): "the list grows one item at a"
    " time from empty, and only here: it stops at 20 either way",
    (f"{PKG}/resolve/combine.py", "if len(conflicts) < 19:"): "only the first three"
    " conflicts are ever read (infeasible shows conflicts[:3], the rest read conflicts[0] or"
    " whether there is one): a cap of 19 or 20 keeps those alike",
    (
        f"{PKG}/resolve/explain.py",
        'if any(r.rule is "platform" and "native Windows" in r.message for r in blocked) or (',
    ): "a Rejection's rule is the string literal its rule passed to reject() (rules.py):"
    " CPython interns such literals, so 'platform' there and here are one object",
    (
        f"{PKG}/resolve/explain.py",
        "first = next(r for r in reachable if r.needs_driver is smallest.needs_driver)",
    ): "min() gave the first reachable rejection of the smallest driver: none before it has an"
    " equal driver (its key would be as small), so the first match is smallest itself, by"
    " identity or by equality",
    (
        f"{PKG}/resolve/explain.py",
        'return versions[ -1] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"',
    ): "read only when the list holds exactly one item, which is both versions[0] and versions[-1]",
    (f"{PKG}/fs/private_read.py", "while left > -1:"): "the extra turn at left == 0 reads"
    " min(0, 1 MiB) = 0 bytes, an empty chunk, which ends the loop as the test would",
    (f"{PKG}/fs/workdir.py", 'if pid == os.getpid() or os.name <= "nt":'): "os.name is"
    " 'posix' on the platforms the tests run on, which sorts after 'nt': False as with `==`",
    (f"{PKG}/fs/file_hash.py", 'for block in iter(lambda: fh.read(1 << 21), b""):'): "the"
    " block size changes how many reads feed the digest, not the bytes it gets",
    (f"{PKG}/fs/workdir.py", 'if pid == os.getpid() or os.name < "nt":'): "os.name is"
    " 'posix' on the platforms the tests run on, which sorts after 'nt': False as with `==`",
    (f"{PKG}/lock/pylock/read.py", "wheel = wheels[ -1]"): "the line above let through only a"
    " list of exactly one wheel: wheels[0] and wheels[-1] are the same",
}


@dataclass
class Outcome:
    area: str
    total: int = 0  # mutants of the kept operators
    sampled: int = 0
    killed: int = 0
    survived: list[tuple[str, str, str]] = field(default_factory=list)  # module, line, diff
    incompetent: int = 0  # the mutant could not even be imported, or timed out
    not_run: int = 0
    seconds: float = 0.0
    baseline_failed: str = ""
    order: tuple[str, ...] = ()  # the tests as the mutants ran them (fastest first)
    note: str = ""  # what a rerun of survivors merged, for the report
    ran: dict[str, int] = field(default_factory=dict)  # mutants that ran, by `where`


def copy_tree(dest: Path) -> None:
    """The working tree as git sees it (tracked and untracked, not ignored) under `dest`."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = raw.decode()
        src = REPO / rel
        if not src.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    # the copy's package first: the editable install points at the checkout
    env["PYTHONPATH"] = os.pathsep.join([str(work / "installer"), env.get("PYTHONPATH", "")])
    env["GPUENV_CACHE_DIR"] = str(work / ".mutation-cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _pytest_argv(area: Area) -> list[str]:
    """The area's tests, as each mutant runs them: stop at the first failure, never online."""
    return [*_PYTEST, *area.tests]


def fastest_first(tests: tuple[str, ...], junit: Path) -> tuple[str, ...]:
    """The area's tests ordered by the seconds each took in the baseline run (its junit XML),
    the fastest first: every mutant runs them all the same, but `pytest -x` stops at the first
    failure, so a mutant a fast file kills no longer waits for the slow ones before it. Ties
    (and a missing or unreadable XML) keep the area's own order."""
    import xml.etree.ElementTree as ET

    try:
        cases = ET.parse(junit).getroot().iter("testcase")
        timed = [(c.get("file", ""), c.get("name", ""), float(c.get("time") or 0.0)) for c in cases]
    except (OSError, ET.ParseError, ValueError):
        return tests

    def seconds(entry: str) -> float:
        path, _, name = entry.partition("::")
        return sum(
            t
            for file, case, t in timed
            if file == path and (not name or case == name or case.startswith(name + "["))
        )

    spent = {entry: seconds(entry) for entry in tests}
    return tuple(sorted(tests, key=lambda entry: spent[entry]))


# one process per mutant run (-n 0): worker start-up would cost more than most areas' tests
_PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not network", "-n", "0"]
# the baseline's junit XML names each test's file (xunit1), which fastest_first sums by
_JUNIT_FILES = ["-o", "junit_family=xunit1"]


def _config(area: Area, work: Path, timeout: float) -> Path:
    command = shlex.join([sys.executable, *_pytest_argv(area)])
    text = (
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(list(area.modules))}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )
    path = work / "cosmic-ray.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _line(work: Path, module: str, line: int) -> str:
    try:
        return (work / module).read_text(encoding="utf-8").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def draw(kept: list[Any], n: int, seed: int) -> set[str]:
    """The job ids of `n` of the work items, the same for the same seed however cosmic-ray's
    database lists them (it lists them in no fixed order: each `init` makes new job ids)."""
    order = sorted(
        kept,
        key=lambda w: (
            str(w.mutations[0].module_path),
            tuple(w.mutations[0].start_pos),
            w.mutations[0].operator_name,
            w.mutations[0].occurrence,
        ),
    )
    return {w.job_id for w in random.Random(seed).sample(order, n)}


def _where(w: Any) -> str:
    m = w.mutations[0]
    return f"{m.module_path}:{m.start_pos[0]} ({m.operator_name})"


def run_area(
    name: str,
    area: Area,
    *,
    budget: float,
    sample: int | None,
    seed: int,
    only: set[str] | None = None,
) -> Outcome:
    """Run the area's sample (`only`: just those of its mutants, by their report's `where`)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    out = Outcome(name)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpuenv-mutation-") as tmp:
        work = Path(tmp)
        copy_tree(work)
        env = _env(work)
        t0 = time.monotonic()
        junit = work / "baseline.xml"
        base = subprocess.run(
            [sys.executable, *_pytest_argv(area), f"--junitxml={junit}", *_JUNIT_FILES],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        base_s = time.monotonic() - t0
        if base.returncode != 0:
            out.baseline_failed = base.stdout[-2000:]
            return out
        area = Area(area.modules, fastest_first(area.tests, junit), area.budget_s)
        out.order = area.tests
        config = _config(area, work, timeout=max(30.0, 4 * base_s))
        session = work / "session.sqlite"
        cr = [sys.executable, "-m", "cosmic_ray.cli"]
        subprocess.run([*cr, "init", str(config), str(session)], cwd=work, env=env, check=True)
        with use_db(str(session), WorkDB.Mode.open) as db:
            items = list(db.work_items)
            kept = [w for w in items if w.mutations[0].operator_name.startswith(KEEP_PREFIXES)]
            out.total = len(kept)
            # twice what the budget allows at the baseline's pace: killed mutants stop at their
            # first failure (-x); those the budget leaves over are reported as not run
            affordable = max(1, int(2 * (budget - base_s) / max(base_s, 1.0)))
            n = min(len(kept), sample if sample is not None else affordable)
            chosen = draw(kept, n, seed)
            out.sampled = n
            if only is not None:
                drawn = {_where(w) for w in kept if w.job_id in chosen}
                stale = sorted(only - drawn)
                if stale:  # the modules changed since the report: its sample is not this one
                    out.baseline_failed = (
                        "the report's survivors are not in this code's sample (its modules"
                        " changed since; run the area whole): " + ", ".join(stale)
                    )
                    return out
                chosen = {w.job_id for w in kept if w.job_id in chosen and _where(w) in only}
            skip = WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
            for w in items:
                if w.job_id not in chosen:
                    db.set_result(w.job_id, skip)
        left = max(1.0, budget - (time.monotonic() - start))
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                [*cr, "exec", str(config), str(session)],
                cwd=work,
                env=env,
                timeout=left,
                capture_output=True,
            )
        with use_db(str(session), WorkDB.Mode.open) as db:
            results = dict(db.results)
            for w in db.work_items:
                if w.job_id not in chosen:
                    continue
                result = results.get(w.job_id)
                if result is None or result.worker_outcome == WorkerOutcome.SKIPPED:
                    out.not_run += 1
                    continue
                out.ran[_where(w)] = out.ran.get(_where(w), 0) + 1
                if result.test_outcome == TestOutcome.SURVIVED:
                    m = w.mutations[0]
                    text = _line(work, str(m.module_path), m.start_pos[0])
                    out.survived.append((_where(w), text, result.diff or ""))
                elif result.test_outcome == TestOutcome.KILLED:
                    out.killed += 1
                else:
                    out.incompetent += 1
    out.seconds = time.monotonic() - start
    return out


def report(outcomes: list[Outcome], quick: bool, area: Area | None = None) -> str:
    title = f"# Mutation testing: {outcomes[0].area}" if area else "# Mutation testing report"
    lines = [title, ""]
    if area is not None:
        lines += [
            "Modules: " + ", ".join(f"`{m}`" for m in area.modules) + ".",
            "Tests: " + ", ".join(f"`{t}`" for t in area.tests) + ".",
            "",
        ]
        if outcomes[0].order and outcomes[0].order != area.tests:
            lines += [
                "Each mutant ran them fastest first (their seconds in the baseline run): "
                + ", ".join(f"`{t}`" for t in outcomes[0].order)
                + ".",
                "",
            ]
    lines += [
        f"Made by `python scripts/maint/mutation.py{' --quick' if quick else ''}` on"
        f" {dt.date.today().isoformat()} (cosmic-ray, the operators in KEEP_PREFIXES; each"
        " mutant against its area's own tests, `pytest -x`). Kill rate = killed / (killed +"
        " survived); incompetent mutants (an import error or a time-out) count as neither.",
        "",
        "| area | mutants | run | killed | survived | equivalent | incompetent | not run |"
        " kill rate | kill rate (non-equivalent) | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        if o.baseline_failed:
            lines.append(f"| {o.area} | baseline tests fail | | | | | | | | | |")
            continue
        equiv = sum(1 for where, _, diff in o.survived if _reason(where, diff))
        judged = o.killed + len(o.survived)
        rate = f"{100 * o.killed / judged:.1f}%" if judged else "-"
        real = o.killed + len(o.survived) - equiv
        rate_real = f"{100 * o.killed / real:.1f}%" if real else "-"
        ran = o.sampled - o.not_run
        lines.append(
            f"| {o.area} | {o.total} | {ran} | {o.killed} | {len(o.survived)} | {equiv} |"
            f" {o.incompetent} | {o.not_run} | {rate} | {rate_real} | {o.seconds:.0f} |"
        )
    for o in outcomes:
        if o.note:
            lines += ["", o.note]
    for o in outcomes:
        if o.baseline_failed:
            lines += ["", f"## {o.area}: the baseline tests fail", "", "```", o.baseline_failed]
            lines += ["```"]
            continue
        if not o.survived:
            continue
        lines += ["", f"## Survivors in {o.area}", ""]
        for where, text, diff in o.survived:
            reason = _reason(where, diff) or "no test tells it apart: a missing test"
            lines += [f"- `{where}`: `{text}`", f"  - why: {reason}"]
            body = [d for d in diff.splitlines() if d.startswith(("+", "-"))]
            body = [d for d in body if not d.startswith(("+++", "---"))]
            if body:
                lines += ["  ```diff", *("  " + d for d in body[:6]), "  ```"]
    return "\n".join(lines) + "\n"


def read_report(text: str) -> Outcome:
    """An area's figures and survivors as its report (made by `report`) gives them."""
    lines = text.splitlines()
    out = Outcome(lines[0].removeprefix("# Mutation testing: ").strip())
    row = next(ln for ln in lines if ln.startswith(f"| {out.area} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    total, ran, killed, _, _, incompetent, not_run = (int(c) for c in cells[1:8])
    out.total, out.killed, out.incompetent, out.not_run = total, killed, incompetent, not_run
    out.sampled, out.seconds = ran + not_run, float(cells[10])
    for i, ln in enumerate(lines):
        if not ln.startswith("- `") or " (core/" not in ln:
            continue
        where, _, rest = ln[3:].partition("`: `")
        body = []
        for nxt in lines[i + 1 :]:
            if nxt.startswith("- `"):
                break
            if nxt.startswith(("  -", "  +")) and not nxt.startswith("  - why:"):
                body.append(nxt[2:])
        out.survived.append((where, rest.removesuffix("`"), "\n".join(body)))
    return out


def merge_rerun(before: Outcome, rerun: Outcome, ran: dict[str, int]) -> Outcome:
    """The earlier report's figures with its survivors rerun (after tests were added: tests
    only ever added, a mutant it counted killed stays killed). `ran` counts the rerun's
    mutants by `where`; a survivor the rerun did not reach (its budget) stays one, as it was."""
    merged = Outcome(before.area, before.total, before.sampled)
    merged.seconds = rerun.seconds
    listed: dict[str, int] = {}
    for where, _, _ in before.survived:
        listed[where] = listed.get(where, 0) + 1
    now: dict[str, list[tuple[str, str, str]]] = {}
    for entry in rerun.survived:
        now.setdefault(entry[0], []).append(entry)
    killed = 0
    for where, count in listed.items():
        if ran.get(where, 0) < count:  # not reached (or no longer drawn): as it was
            merged.survived += [e for e in before.survived if e[0] == where]
            continue
        alive = now.get(where, [])[:count]  # the same line and operator twice: at most as many
        merged.survived += alive
        killed += count - len(alive)
    rerun_incompetent = min(rerun.incompetent, killed)
    carried = sum(1 for where, _, diff in before.survived if _reason(where, diff))
    merged.killed = before.killed + killed - rerun_incompetent
    merged.incompetent = before.incompetent + rerun_incompetent
    merged.not_run = before.not_run
    merged.order = rerun.order
    merged.note = (
        f"Rerun of the earlier report's {len(before.survived)} survivors after their tests"
        f" (the same sample; the {before.killed} it counted killed stay killed, as tests were"
        f" only added): {killed - rerun_incompetent} killed now, {len(merged.survived)} still"
        f" {'survives' if len(merged.survived) == 1 else 'survive'}"
        + (f" ({carried} of them equivalent, carried over without a rerun)" if carried else "")
        + ". The table merges both;"
        " seconds are the rerun's (the earlier run took"
        f" {before.seconds:.0f})."
    )
    return merged


def _reason(where: str, diff: str) -> str:
    module = where.split(":", 1)[0]
    after = [d[1:].strip() for d in diff.splitlines() if d.startswith("+") and d[:3] != "+++"]
    return EQUIVALENT.get((module, after[0] if after else ""), "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("areas", nargs="*", help=f"areas to run: {', '.join(AREAS)} (default all)")
    parser.add_argument("--quick", action="store_true", help="a small sample for CI (< 60 s)")
    parser.add_argument("--budget", type=int, help="seconds per area (default: each area's)")
    parser.add_argument("--sample", type=int, help="at most this many mutants per area")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument(
        "--report-dir",
        type=Path,
        help="write one markdown report per area here (<dir>/<area>.md), e.g. benchmarks/mutation",
    )
    parser.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="run again only the survivors of each area's report in --report-dir (the same"
        " sample and seed), after tests were added for them, and merge the figures into it;"
        " refused when the area's modules changed since the report (its sample is another)",
    )
    args = parser.parse_args(argv)
    unknown = [a for a in args.areas if a not in AREAS]
    if unknown:
        parser.error(f"unknown area(s) {', '.join(unknown)}; known: {', '.join(AREAS)}")
    if args.rerun_survivors and (args.quick or not args.report_dir):
        parser.error("--rerun-survivors reads and rewrites the reports of --report-dir")
    if args.quick:
        chosen = [QUICK]
        sample: int | None = QUICK_SAMPLE
    else:
        chosen = [(a, AREAS[a]) for a in (args.areas or AREAS)]
        sample = args.sample
    outcomes = []
    for name, area in chosen:
        budget = args.budget or area.budget_s
        print(f"mutation: {name} ({budget}s budget)", file=sys.stderr, flush=True)
        if args.rerun_survivors:
            before = read_report((args.report_dir / f"{name}.md").read_text(encoding="utf-8"))
            if sample is not None and sample != before.sampled:
                parser.error(f"{name}'s report sampled {before.sampled}, not {sample}")
            # an equivalent survivor (its reason in EQUIVALENT) is carried over, not run again:
            # no test can kill it, and each costs the area's whole test set
            only = {where for where, _, diff in before.survived if not _reason(where, diff)}
            rerun = run_area(
                name, area, budget=budget, sample=before.sampled, seed=args.seed, only=only
            )
            outcome = rerun if rerun.baseline_failed else merge_rerun(before, rerun, rerun.ran)
        else:
            outcome = run_area(name, area, budget=budget, sample=sample, seed=args.seed)
        outcomes.append(outcome)
        if args.rerun_survivors and outcome.baseline_failed:  # the report stays as it was
            print(f"mutation: {name}: {outcome.baseline_failed}", file=sys.stderr)
            continue
        if args.report_dir:  # each area's report as soon as it is done
            args.report_dir.mkdir(parents=True, exist_ok=True)
            text = report([outcome], args.quick, area)
            (args.report_dir / f"{name}.md").write_text(text, encoding="utf-8")
    print(report(outcomes, args.quick))
    failed = any(o.baseline_failed for o in outcomes)
    if args.quick:  # CI: the tooling works and the sample ran; survivors are for the report
        failed = failed or not any(o.killed for o in outcomes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
