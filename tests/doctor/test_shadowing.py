"""Shadowed CUDA libraries, built for real: tiny shared libraries with CUDA's sonames in a
"system" folder on LD_LIBRARY_PATH and in a folder an ld.so.conf names (under a root the test
writes), against an environment stand-in with the nvidia-* wheel's copy of another version."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.doctor.findings import PROBLEM, WARN
from gpuenv.doctor.loader import (
    DEFAULT,
    LD_LIBRARY_PATH,
    conf_dirs,
    libraries_in,
    search_order,
    version_of,
)
from gpuenv.doctor.shadowing import (
    clean_library_path,
    environment_libraries,
    environment_shadowing,
    machine_shadowing,
    package_version,
    same_version,
    toolkit_variables,
    windows_path_shadowing,
)
from gpuenv.recipes.cuda_sonames import cuda_soname
from installrepos import gpuenv
from isolation import isolate_store
from storehelpers import fake_env

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler to build a shared library")
SYSTEM_VERSION = "12.4.127"
CONF_VERSION = "12.2.140"
ENV_VERSION = "12.6.77"
# What the loaded library reports, so a test can tell which copy the loader took.
_SOURCE = 'const char *which_copy(void) {{ return "{tag}"; }}\n'


def shared_library(folder: Path, soname: str, file_name: str, tag: str, *extra: str) -> Path:
    """A real ELF shared library `folder/file_name` with DT_SONAME `soname`, and the soname
    link ldconfig would make when the file name is longer."""
    assert CC is not None
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"{tag}.c"
    source.write_text(_SOURCE.format(tag=tag))
    target = folder / file_name
    subprocess.run(
        [CC, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target), str(source), *extra],
        check=True,
        capture_output=True,
    )
    source.unlink()
    if file_name != soname:
        (folder / soname).symlink_to(file_name)
    return target


def system_folder(base: Path) -> Path:
    folder = base / "opt" / "cuda-12.4" / "lib64"
    shared_library(folder, "libcudart.so.12", f"libcudart.so.{SYSTEM_VERSION}", "system")
    return folder


def conf_root(base: Path) -> Path:
    """A root whose /etc/ld.so.conf includes ld.so.conf.d/*.conf, one naming a CUDA folder."""
    root = base / "root"
    (root / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (root / "etc" / "ld.so.conf").write_text(
        "# the loader's folders\ninclude ld.so.conf.d/*.conf\n"
    )
    (root / "etc" / "ld.so.conf.d" / "cuda-12-2.conf").write_text("/usr/local/cuda-12.2/lib64\n")
    (root / "etc" / "ld.so.conf.d" / "libc.conf").write_text("/usr/local/lib\n")
    shared_library(
        root / "usr" / "local" / "cuda-12.2" / "lib64",
        "libcudart.so.12",
        f"libcudart.so.{CONF_VERSION}",
        "conf",
    )
    return root


def environment(env_dir: Path, version: str = ENV_VERSION) -> Path:
    """An environment's site-packages with nvidia-cuda-runtime-cu12 as its wheel lays it out:
    `nvidia/cuda_runtime/lib/libcudart.so.12` only, the version in the dist-info's name."""
    site = env_dir / "lib" / "python3.11" / "site-packages"
    lib = shared_library(
        site / "nvidia" / "cuda_runtime" / "lib", "libcudart.so.12", "libcudart.so.12", "env"
    )
    dist = site / f"nvidia_cuda_runtime_cu12-{version}.dist-info"
    dist.mkdir()
    (dist / "RECORD").write_text(
        f"nvidia/cuda_runtime/lib/libcudart.so.12,sha256=x,{lib.stat().st_size}\n"
        f"{dist.name}/RECORD,,\n"
    )
    return site


# Pure parts: names, versions, configuration files.


@pytest.mark.parametrize(
    ("name", "soname"),
    [
        ("libcudart.so.12", "libcudart.so.12"),
        ("libcudnn.so.8.6.0", "libcudnn.so.8"),
        ("libcudnn_ops_infer.so.8", "libcudnn_ops_infer.so.8"),
        ("libcudnn_engines_precompiled.so.9", "libcudnn_engines_precompiled.so.9"),
        ("libcublasLt.so.11", "libcublasLt.so.11"),
        ("libnccl.so.2.18.1", "libnccl.so.2"),
        ("libnvJitLink.so.12", "libnvJitLink.so.12"),
        ("libcudart.so", None),  # the development link: never loaded by soname
        ("libcuda.so.1", None),  # the driver, WSL2's /usr/lib/wsl/lib: not a shadow
        ("libcudart_static.a", None),
        ("libfoo.so.1", None),
    ],
)
def test_cuda_soname(name: str, soname: str | None) -> None:
    assert cuda_soname(name) == soname


def test_version_from_the_name_or_the_link(tmp_path: Path) -> None:
    (tmp_path / "libcudnn.so.8.6.0").write_bytes(b"")
    (tmp_path / "libcudnn.so.8").symlink_to("libcudnn.so.8.6.0")
    (tmp_path / "libcudart.so.12").write_bytes(b"")
    assert version_of(str(tmp_path / "libcudnn.so.8")) == "8.6.0"
    assert version_of(str(tmp_path / "libcudart.so.12")) is None  # only the major


def test_the_soname_link_decides_which_file_counts(tmp_path: Path) -> None:
    """Two toolkits' files in one folder: the loader opens the soname, a link to one of them."""
    for name in ("libcudart.so.12.2.140", "libcudart.so.12.4.127", "libcudart.so.12.6.77"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "libcudart.so.12").symlink_to("libcudart.so.12.4.127")
    [lib] = libraries_in(tmp_path, "default")
    assert (lib.soname, lib.path, lib.version) == (
        "libcudart.so.12",
        str(tmp_path / "libcudart.so.12"),
        "12.4.127",
    )


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("9.1.0.70", "9.1.0", True),  # nvidia-cudnn-cu12's version, libcudnn.so.9.1.0
        ("12.4.127", "12.4.127", True),
        ("12.4.127", "12.6.77", False),
        ("8.6.0", "8.9.7.29", False),
        ("12", "12.4.127", False),  # a major alone says nothing
        ("12.4", "12.4.127", True),  # major.minor agreeing (libcudart.so.12.4) is enough
        (None, "12.4.127", False),
    ],
)
def test_same_version(a: str | None, b: str | None, same: bool) -> None:
    assert same_version(a, b) is same
    assert same_version(b, a) is same


def test_ld_so_conf_includes_comments_and_order(tmp_path: Path) -> None:
    root = tmp_path
    (root / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (root / "etc" / "ld.so.conf").write_text(
        "/first # trailing comment\ninclude /etc/ld.so.conf.d/*.conf\n# /commented\n"
        "hwcap 1 nosegneg\n/last\ninclude /etc/ld.so.conf\n"  # a loop ends
    )
    (root / "etc" / "ld.so.conf.d" / "b.conf").write_text("/b1 /b2\n")
    (root / "etc" / "ld.so.conf.d" / "a.conf").write_text("/a\n")
    (root / "etc" / "ld.so.conf.d" / "ignored.txt").write_text("/nope\n")
    dirs = conf_dirs(root)
    assert [d.path for d in dirs] == [str(root / p) for p in ("first", "a", "b1", "b2", "last")]
    assert dirs[1].origin == str(root / "etc" / "ld.so.conf.d" / "a.conf")
    assert dirs[0].origin == str(root / "etc" / "ld.so.conf")


def test_search_order_variable_then_conf_then_defaults(tmp_path: Path) -> None:
    root = conf_root(tmp_path)
    order = search_order({LD_LIBRARY_PATH: "/x:::/y;/x"}, root)
    assert [(d.path, d.origin) for d in order[:2]] == [
        ("/x", LD_LIBRARY_PATH),
        ("/y", LD_LIBRARY_PATH),
    ]
    assert order[2].path == str(root / "usr/local/cuda-12.2/lib64")
    assert order[2].origin.endswith("cuda-12-2.conf")
    assert [d.origin for d in order[-5:]] == [DEFAULT] * 5
    assert search_order({}, tmp_path / "empty")[0].origin == DEFAULT  # no ld.so.conf: defaults


# The environment check, with real libraries.


@needs_cc
def test_ld_library_path_shadow_is_a_problem_with_path_versions_and_fix(tmp_path: Path) -> None:
    system = system_folder(tmp_path)
    env_dir = tmp_path / "env"
    site = environment(env_dir)
    assert environment_libraries(env_dir)["libcudart.so.12"].version == ENV_VERSION
    [f] = environment_shadowing("lab", env_dir, {LD_LIBRARY_PATH: str(system)}, tmp_path / "none")
    assert f.severity == PROBLEM and f.code == "shadowed-library" and f.subject == "lab"
    assert str(system / "libcudart.so.12") in f.what and SYSTEM_VERSION in f.what
    assert str(site / "nvidia/cuda_runtime/lib/libcudart.so.12") in f.what
    assert ENV_VERSION in f.what
    assert f.what.startswith("libcudart.so.12: the loader would take ")
    assert f"{system} is on LD_LIBRARY_PATH" in f.why
    assert "LD_LIBRARY_PATH is searched before the RUNPATH" in f.why[1]
    assert f"remove {system} from LD_LIBRARY_PATH" in f.fix[0]
    assert "`gpuenv run -n lab -- COMMAND`" in f.fix[0]


@needs_cc
def test_conf_folder_shadow_names_the_conf_file(tmp_path: Path) -> None:
    root = conf_root(tmp_path)
    env_dir = tmp_path / "env"
    environment(env_dir)
    [f] = environment_shadowing("lab", env_dir, {}, root)
    conf = root / "etc" / "ld.so.conf.d" / "cuda-12-2.conf"
    folder = root / "usr" / "local" / "cuda-12.2" / "lib64"
    assert f.severity == WARN  # after the framework's RUNPATH: it wins only by soname
    assert str(folder / "libcudart.so.12") in f.what and CONF_VERSION in f.what
    assert " can shadow the environment's " in f.what
    assert ENV_VERSION in f.what
    assert f"{conf} names {folder} for ldconfig's cache" in f.why
    assert f.why[1].startswith("it wins where a library is loaded by soname without a RUNPATH")
    assert f"remove the line naming {folder} from {conf}" in f.fix[0] and "ldconfig" in f.fix[0]


@needs_cc
def test_a_default_folder_shadow_is_a_warning_with_its_own_fix(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = root / "usr" / "lib" / "x86_64-linux-gnu"  # searched by default, no ld.so.conf
    shared_library(folder, "libcudart.so.12", f"libcudart.so.{SYSTEM_VERSION}", "default")
    env_dir = tmp_path / "env"
    environment(env_dir)
    [f] = environment_shadowing("lab", env_dir, {}, root)
    assert f.severity == WARN and " can shadow the environment's " in f.what
    assert f.fix == (
        f"remove the CUDA packages that put these libraries into {folder} if nothing else needs"
        " them (the environments bring their own)",
    )


@needs_cc
def test_clean_setups_report_nothing(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    site = environment(env_dir)
    assert environment_shadowing("lab", env_dir, {}, tmp_path / "none") == []
    own = str(site / "nvidia" / "cuda_runtime" / "lib")
    system = system_folder(tmp_path)
    # the environment's own folder first on LD_LIBRARY_PATH: the loader takes its copy
    environ = {LD_LIBRARY_PATH: f"{own}:{system}"}
    assert environment_shadowing("lab", env_dir, environ, tmp_path / "none") == []
    # the same version in an ldconfig folder: no difference to report
    same = tmp_path / "same"
    environment(same, CONF_VERSION)
    assert environment_shadowing("lab", same, {}, conf_root(tmp_path)) == []
    assert machine_shadowing({}, tmp_path / "none") == []


@needs_cc
def test_machine_lists_every_outside_folder_but_the_store(tmp_path: Path) -> None:
    system = system_folder(tmp_path)
    root = conf_root(tmp_path)
    store = tmp_path / "store"
    environment(store / "lab")
    wsl = tmp_path / "wsl" / "lib"
    wsl.mkdir(parents=True)
    (wsl / "libcuda.so.1").write_bytes(b"")  # the driver WSL2 puts there: it belongs
    own = store / "lab" / "lib" / "python3.11" / "site-packages" / "nvidia" / "cuda_runtime"
    environ = {LD_LIBRARY_PATH: f"{wsl}:{own / 'lib'}:{system}"}
    found = machine_shadowing(environ, root, store)
    assert [f.code for f in found] == ["outside-cuda-libraries"] * 2
    assert found[0].what.startswith(f"{system} holds") and SYSTEM_VERSION in found[0].what
    assert "LD_LIBRARY_PATH" in found[0].why[0]
    assert "cuda-12-2.conf" in found[1].why[0] and CONF_VERSION in found[1].what
    assert all(f.severity == WARN for f in found)


@needs_cc
def test_clean_library_path_drops_only_folders_with_cuda(tmp_path: Path) -> None:
    system = system_folder(tmp_path)
    env_dir = tmp_path / "env"
    own = environment(env_dir) / "nvidia" / "cuda_runtime" / "lib"
    plain = tmp_path / "plain"
    plain.mkdir()
    environ = {LD_LIBRARY_PATH: f"{plain}:{system}:{own}", "HOME": "/h"}
    cleaned, removed = clean_library_path(environ, env_dir)
    assert cleaned[LD_LIBRARY_PATH] == f"{plain}:{own}" and cleaned["HOME"] == "/h"
    assert removed == [(str(system), ["libcudart.so.12"])]
    semicolon, _ = clean_library_path({LD_LIBRARY_PATH: f"{plain};{system}"}, env_dir)
    assert semicolon[LD_LIBRARY_PATH] == str(plain)  # ld.so splits on ';' too
    alone, _ = clean_library_path({LD_LIBRARY_PATH: str(system)}, env_dir)
    assert LD_LIBRARY_PATH not in alone
    assert clean_library_path({}, env_dir) == ({}, [])


def test_a_toolkit_assembled_from_wheels_keeps_their_versions(tmp_path: Path) -> None:
    """The layout of /usr/local/cuda-13.0 on this project's lab machine: the nvidia-* wheels'
    files under lib/, their dist-info folders under dist-info/."""
    lib = tmp_path / "cuda-13.0" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudart.so.13").write_bytes(b"")
    (lib / "libcupti.so.13").write_bytes(b"")
    dist = tmp_path / "cuda-13.0" / "dist-info" / "nvidia_cuda_runtime-13.0.96.dist-info"
    dist.mkdir(parents=True)
    (dist / "RECORD").write_text("nvidia/cu13/lib/libcudart.so.13,sha256=x,1\n")
    (tmp_path / "cuda-13.0" / "lib64").symlink_to("lib")  # as there: named twice, listed once
    environ = {LD_LIBRARY_PATH: f"{lib}:{lib.parent / 'lib64'}"}
    [found] = machine_shadowing(environ, tmp_path / "none")
    assert "libcudart.so.13 (13.0.96)" in found.what
    assert "libcupti.so.13 (version unknown)" in found.what


def test_cuda_home_naming_a_toolkit(tmp_path: Path) -> None:
    toolkit = tmp_path / "cuda-11.8"
    (toolkit / "lib64").mkdir(parents=True)
    (toolkit / "lib64" / "libcudart.so.11.8.89").write_bytes(b"")
    [f] = toolkit_variables({"CUDA_HOME": str(toolkit), "CUDA_PATH": str(tmp_path / "none")})
    assert f.code == "cuda-home-set" and f"CUDA_HOME={toolkit}" in f.what
    assert "libcudart.so.11 (11.8.89)" in f.what and "unset CUDA_HOME" in f.fix[0]
    assert toolkit_variables({}) == []


def test_windows_path_entries_with_cuda_dlls() -> None:
    folders = {
        r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2\bin": [
            "cudart64_110.dll",
            "cublas64_11.dll",
            "nvcc.exe",
        ],
        r"C:\tools\cudnn\bin": ["cudnn64_8.dll", "cudnn_ops_infer64_8.dll"],
        r"C:\Windows\System32": ["kernel32.dll", "nvcuda.dll"],  # the driver: it belongs
    }

    def listdir(folder: str) -> list[str]:
        if folder not in folders:
            raise FileNotFoundError(folder)
        return folders[folder]

    # Windows spells it Path, and other variables come before it
    environ = {"SystemRoot": r"C:\Windows", "Path": ";".join([*folders, r"C:\missing", ""])}
    found = windows_path_shadowing(environ, listdir)
    assert [f.what.split(" on PATH")[0] for f in found] == list(folders)[:2]
    assert "cublas64_11.dll, cudart64_110.dll" in found[0].what
    assert "cudnn64_8.dll, cudnn_ops_infer64_8.dll" in found[1].what
    cuda = next(iter(folders))
    assert found[0].fix == (f"remove {cuda} from PATH when you use a GPU environment",)


# The commands, end to end: doctor's JSON, and `gpuenv run` loading the environment's copy.

_WHICH = (
    "import ctypes, sys\n"
    "fw = ctypes.CDLL(sys.argv[1])  # loads libcudart.so.12 as its DT_NEEDED\n"
    "[path] = {l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l}\n"
    "cudart = ctypes.CDLL(path)  # the copy already loaded\n"
    "cudart.which_copy.restype = ctypes.c_char_p\n"
    "print(cudart.which_copy().decode(), path)\n"
)


@needs_cc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux loader")
def test_run_loads_the_environments_copy_and_doctor_reports_the_shadow(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_store(monkeypatch, tmp_path, tmp_path_factory)
    version = fake_env("lab")
    site = environment(version)
    # A "framework" library that finds cudart as torch does: DT_NEEDED, and a RUNPATH of
    # $ORIGIN/../nvidia/cuda_runtime/lib (--enable-new-dtags writes RUNPATH, not RPATH).
    own = site / "nvidia" / "cuda_runtime" / "lib"
    framework = shared_library(
        site / "fw",
        "libfw.so",
        "libfw.so",
        "fw",
        f"-L{own}",
        "-Wl,--no-as-needed",  # keep the DT_NEEDED though no symbol of it is used
        "-l:libcudart.so.12",
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../nvidia/cuda_runtime/lib",
    )
    system = system_folder(tmp_path)
    monkeypatch.setenv(LD_LIBRARY_PATH, str(system))
    code = ["-c", _WHICH, str(framework)]
    # The shadow is real: a plain start takes the system copy over the RUNPATH.
    plain = subprocess.run([sys.executable, *code], capture_output=True, text=True, check=True)
    assert plain.stdout.split() == ["system", str(system / f"libcudart.so.{SYSTEM_VERSION}")]
    ran = gpuenv("-v", "run", "-n", "lab", "--", sys.executable, *code)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["env", str((own / "libcudart.so.12").resolve())]
    assert f"LD_LIBRARY_PATH without {system}: it holds libcudart.so.12" in ran.stderr
    quiet = gpuenv("run", "-n", "lab", "--", sys.executable, "-c", "import os; print(1)")
    assert quiet.returncode == 0 and "LD_LIBRARY_PATH" not in quiet.stderr

    doctor = gpuenv("doctor", "--json", "--no-verify")
    data = json.loads(doctor.stdout)
    [env] = data["environments"]
    [shadow] = [f for f in env["findings"] if f["code"] == "shadowed-library"]
    assert shadow["severity"] == PROBLEM and SYSTEM_VERSION in shadow["what"]
    assert ENV_VERSION in shadow["what"] and "gpuenv run -n lab" in shadow["fix"][0]
    assert shadow in data["problems"] and doctor.returncode == 1
    outside = [f for f in data["machine_findings"] if f["code"] == "outside-cuda-libraries"]
    if data["machine"]["gpus"]:
        assert any(f["what"].startswith(f"{system} holds") for f in outside)
    else:  # no NVIDIA GPU: nothing loads the machine's copies for it, no edit is asked for
        assert outside == []

    monkeypatch.delenv(LD_LIBRARY_PATH)
    clean = json.loads(gpuenv("doctor", "--json", "--no-verify").stdout)
    assert not [f for f in clean["environments"][0]["findings"] if "shadow" in f["code"]]
    assert not any(str(tmp_path) in f["what"] for f in clean["machine_findings"])


@needs_cc
@pytest.mark.parametrize(
    "line", ["/usr/lo\x00cal/lib", "include /etc/ld.so.conf.\x00d/*.conf", "\x00"]
)
def test_a_nul_byte_in_a_loader_configuration_is_a_finding_about_that_file(
    line: str, tmp_path: Path
) -> None:
    # hostile round four: a NUL byte in an ld.so.conf file was a traceback (embedded null byte)
    root = conf_root(tmp_path)
    broken = root / "etc" / "ld.so.conf.d" / "broken.conf"
    broken.write_text(f"/opt/before\n{line}\n/opt/after\n")
    env_dir = tmp_path / "env"
    environment(env_dir)
    found = machine_shadowing({}, root)
    assert [f.code for f in found] == ["loader-configuration-unreadable", "outside-cuda-libraries"]
    assert found[0].severity == WARN and str(broken) in found[0].what
    assert "NUL" in found[0].what and "\x00" not in found[0].what
    assert "cuda-12-2.conf" in found[1].why[0]  # the rest of the configuration still counts
    [shadow] = environment_shadowing("lab", env_dir, {}, root)
    assert CONF_VERSION in shadow.what
    dirs = [d.path for d in conf_dirs(root)]
    assert str(root / "opt" / "before") in dirs and str(root / "opt" / "after") in dirs


def _cuda_folder(folder: Path) -> Path:
    """A folder with a CUDA runtime in it (its name is all doctor reads here)."""
    folder.mkdir(parents=True)
    (folder / "libcudart.so.12").write_bytes(b"")
    return folder


def test_a_folder_that_only_shares_a_prefix_with_the_store_is_outside_it(tmp_path: Path) -> None:
    """`/x/envs-old` beside the store `/x/envs` is not inside it: its CUDA libraries are
    reported; the store's own are not (issue 28: a string-prefix comparison would skip both)."""
    store = tmp_path / "envs"
    own = _cuda_folder(store / "lab" / "lib")
    beside = _cuda_folder(tmp_path / "envs-old" / "lib")
    environ = {LD_LIBRARY_PATH: f"{own}:{beside}"}
    [found] = machine_shadowing(environ, tmp_path / "none", store)
    assert found.what.startswith(f"{beside} holds") and "libcudart.so.12" in found.what


def test_clean_library_path_keeps_only_the_environments_own_folders(tmp_path: Path) -> None:
    """`gpuenv run` drops LD_LIBRARY_PATH folders with CUDA libraries outside the environment:
    `/x/env-old/lib` beside the environment `/x/env` is outside it."""
    env_dir = tmp_path / "env"
    own = _cuda_folder(env_dir / "lib")
    beside = _cuda_folder(tmp_path / "env-old" / "lib")
    cleaned, removed = clean_library_path({LD_LIBRARY_PATH: f"{own}:{beside}"}, env_dir)
    assert cleaned[LD_LIBRARY_PATH] == str(own)
    assert removed == [(str(beside), ["libcudart.so.12"])]


def test_loader_configuration_stops_at_64_files(tmp_path: Path) -> None:
    """ld.so.conf and the files it includes are read up to 64 in all (a bound against include
    loops and floods): the 63 first of ld.so.conf.d count, the next do not."""
    root = tmp_path
    (root / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (root / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    for i in range(70):
        (root / "etc" / "ld.so.conf.d" / f"{i:02d}.conf").write_text(f"/d{i:02d}\n")
    assert [d.path for d in conf_dirs(root)] == [str(root / f"d{i:02d}") for i in range(63)]


@needs_cc
def test_a_wheel_record_up_to_16_mib_names_the_version(tmp_path: Path) -> None:
    """A RECORD is read up to 16 MiB (a bound against a planted huge file); the version of a
    library whose RECORD is larger is unknown."""
    env_dir = tmp_path / "env"
    site = environment(env_dir)
    record = site / f"nvidia_cuda_runtime_cu12-{ENV_VERSION}.dist-info" / "RECORD"
    with record.open("a") as fh:
        fh.write("#" * ((16 << 20) - record.stat().st_size - 1) + "\n")
    assert record.stat().st_size == 16 << 20
    assert environment_libraries(env_dir)["libcudart.so.12"].version == ENV_VERSION
    with record.open("a") as fh:
        fh.write("\n")
    assert environment_libraries(env_dir)["libcudart.so.12"].version is None


@needs_cc
def test_other_files_in_a_folder_do_not_hide_its_cuda_libraries(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("sorts before every lib*\n")
    shared_library(tmp_path, "libcudart.so.12", f"libcudart.so.{SYSTEM_VERSION}", "system")
    assert [lib.soname for lib in libraries_in(tmp_path, "default")] == ["libcudart.so.12"]


def test_a_loader_configuration_up_to_1_mib_is_read(tmp_path: Path) -> None:
    conf = tmp_path / "etc" / "ld.so.conf"
    conf.parent.mkdir(parents=True)
    body = "/first\n"
    conf.write_text(body + "#" * ((1 << 20) - len(body) - 1) + "\n")
    assert [d.path for d in conf_dirs(tmp_path)] == [str(tmp_path / "first")]
    with conf.open("a") as fh:
        fh.write("\n")
    assert conf_dirs(tmp_path) == []


def test_the_nul_byte_finding_counts_the_lines_it_skipped(tmp_path: Path) -> None:
    root = conf_root(tmp_path)
    broken = root / "etc" / "ld.so.conf.d" / "broken.conf"
    broken.write_text("/opt/a\x00b\n/opt/kept\n/opt/c\x00d\n")
    found = machine_shadowing({}, root)
    assert found[0].code == "loader-configuration-unreadable"
    assert "a NUL byte in 2 of its lines" in found[0].what, found[0].what


def test_a_wheels_library_takes_the_version_of_the_record_that_lists_it(tmp_path: Path) -> None:
    # another nvidia wheel's RECORD sorts first; its paths sort both before the library's
    # (nvidia/cublas/...) and after it (nvidia_cublas_cu12-....dist-info/...)
    site = tmp_path / "site-packages"
    lib = site / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"")
    for dist, files in (
        ("nvidia_cublas_cu12-12.4.5.8", ["nvidia/cublas/lib/libcublas.so.12"]),
        ("nvidia_cuda_runtime_cu12-12.4.127", ["nvidia/cuda_runtime/lib/libcudart.so.12"]),
    ):
        record = site / f"{dist}.dist-info" / "RECORD"
        record.parent.mkdir()
        lines = [*files, f"{dist}.dist-info/RECORD"]
        record.write_text("".join(f"{f},sha256=x,1\n" for f in lines))
    assert package_version(lib) == "12.4.127"
    assert package_version(site / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12") is None


@pytest.mark.parametrize("first", [None, "", "empty"])
def test_cuda_path_is_read_whatever_cuda_home_holds(tmp_path: Path, first: str | None) -> None:
    # CUDA_HOME unset, empty, or naming a folder without CUDA libraries: CUDA_PATH still counts
    toolkit = tmp_path / "cuda-12.4"
    (toolkit / "lib64").mkdir(parents=True)
    (toolkit / "lib64" / "libcudart.so.12.4.127").write_bytes(b"")
    (tmp_path / "empty").mkdir()
    environ = {"CUDA_PATH": str(toolkit)}
    if first is not None:
        environ["CUDA_HOME"] = str(tmp_path / first) if first else ""
    [f] = toolkit_variables(environ)
    assert f.what == f"CUDA_PATH={toolkit} names a CUDA toolkit: libcudart.so.12 (12.4.127)"


def test_a_toolkit_names_its_first_four_libraries(tmp_path: Path) -> None:
    toolkit = tmp_path / "cuda-12.4"
    (toolkit / "lib64").mkdir(parents=True)
    names = [
        "libcublas.so.12",
        "libcudart.so.12",
        "libcufft.so.11",
        "libcurand.so.10",
        "libcusparse.so.12",
    ]
    for name in names:
        (toolkit / "lib64" / name).write_bytes(b"")
    [f] = toolkit_variables({"CUDA_HOME": str(toolkit)})
    listed = f.what.split(": ", 1)[1].split(", ")
    assert len(listed) == 4 and all(n.endswith(" (version unknown)") for n in listed), listed


def test_a_conda_packages_library_takes_the_version_of_the_record_that_lists_it(
    tmp_path: Path,
) -> None:
    # conda-meta/*.json, read in name order: one unreadable, one of another package, then
    # the one whose files list the library
    lib = tmp_path / "lib" / "libcudart.so.12"
    lib.parent.mkdir()
    lib.write_bytes(b"")
    meta = tmp_path / "conda-meta"
    meta.mkdir()
    (meta / "0-broken.json").write_text("{")
    (meta / "1-list.json").write_text("[]")
    (meta / "libcublas-12.4.5.8-0.json").write_text(
        json.dumps({"version": "12.4.5.8", "files": ["lib/libcublas.so.12"]})
    )
    (meta / "cuda-cudart-12.4.127-0.json").write_text(
        json.dumps({"version": "12.4.127", "files": ["lib/libcudart.so.12"]})
    )
    assert package_version(lib) == "12.4.127"
