"""A lockfile is untrusted input: every crafted field is refused by name, with exit status 2."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuenv.errors import USAGE_EXIT, exit_code
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.load import MAX_LOCKFILE_BYTES, load_locked
from lockdata import MD5_C, dump, in_process, load, package, plan_of, set_plan, write_valid

Mutation = Callable[[dict[str, Any]], None]


def _pip_url(name: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        package(data, "jax")["url"] = f"https://files.example/p/{name}"

    return mutate


def _conda_url(name: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        package(data, "cudatoolkit")["url"] = f"https://conda.example/main/linux-64/{name}"

    return mutate


def _conda_extra(**fields: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        custom = data["metadata"]["custom_metadata"]
        extra = json.loads(custom["gpuenv.conda.cudatoolkit"])
        custom["gpuenv.conda.cudatoolkit"] = json.dumps({**extra, **fields})

    return mutate


def _plan(change: Callable[[dict[str, Any]], Any]) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        plan = plan_of(data)
        change(plan)
        set_plan(data, plan)

    return mutate


def _hash(name: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        package(data, name)["hash"] = value

    return mutate


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _custom(key: str, value: Any) -> Mutation:
    return _set(("metadata", "custom_metadata", key), value)


def _jax(**fields: Any) -> Mutation:
    return lambda data: package(data, "jax").update(fields)


def _duplicate(data: dict[str, Any]) -> None:
    data["package"].append(dict(package(data, "numpy"), name="NumPy"))


def _drop(key: str) -> Mutation:
    return lambda data: data.pop(key)


# (case id, mutation, words the message must hold)
CASES: list[tuple[str, Mutation, tuple[str, ...]]] = [
    # names from URLs: encoded separators, dot names, NUL, empty, backslashes
    ("pip-encoded-dotdot", _pip_url("..%2F..%2F.bashrc"), ("jax", "not a plain file name")),
    ("pip-encoded-dots", _pip_url("%2e%2e"), ("jax", "not a file name")),
    ("pip-absolute", _pip_url("%2Fhome%2Fu%2Fx-1-py3-none-any.whl"), ("plain file name",)),
    ("pip-backslash", _pip_url("..%5C..%5Cx-1-py3-none-any.whl"), ("holds '\\\\'",)),
    ("pip-raw-backslash", _pip_url("..\\x.whl"), ("backslash",)),
    ("pip-nul", _pip_url("jax-0.4.30-py3-none-any.whl%00"), ("plain file name",)),
    ("pip-empty-name", _pip_url(""), ("jax", "empty")),
    ("pip-dot", _pip_url("."), ("not a file name",)),
    ("pip-long", _pip_url("j" * 300 + "-1-py3-none-any.whl"), ("longer than 255",)),
    ("pip-scheme", _jax(url="ftp://h/jax-0.4.30-py3-none-any.whl"), ("scheme",)),
    (
        "portable-dotdot",
        _jax(url="index:///jax/..%2Fjax-0.4.30-py3-none-any.whl"),
        ("plain file name",),
    ),
    (
        "portable-extra-part",
        _jax(url="index:///../jax/jax-0.4.30-py3-none-any.whl"),
        ("index:///<project>/<file name>",),
    ),
    (
        "portable-one-part",
        _jax(url="index:///jax-0.4.30-py3-none-any.whl"),
        ("index:///<project>/<file name>",),
    ),
    # wheels only: no sdist, no other file, and the wheel is the package's own
    (
        "pip-sdist",
        _pip_url("jax-0.4.30.tar.gz"),
        ("gpuenv installs wheels only: jax has an sdist URL", "no package code runs at install"),
    ),
    ("pip-not-wheel", _pip_url("jax.exe"), ("does not name a wheel",)),
    ("pip-bad-wheel-name", _pip_url("jax.whl"), ("not a valid wheel name",)),
    ("pip-other-project", _pip_url("evil-1.0-py3-none-any.whl"), ("wheel of evil, not of jax",)),
    # conda names
    ("conda-encoded-dotdot", _conda_url("..%2F..%2Fx.conda"), ("cudatoolkit", "plain file name")),
    ("conda-not-package", _conda_url("cudatoolkit-11.2.2.zip"), ("not name a conda package",)),
    ("conda-file-name-dotdot", _conda_extra(file_name="../../x.tar.bz2"), ("file_name",)),
    ("conda-file-name-other", _conda_extra(file_name="other-1-0.tar.bz2"), ("file_name",)),
    # hashes: the one authority; cache folder names
    ("sha-dotdot", _hash("jax", {"sha256": "../../x"}), ("hash.sha256", "64 lowercase hex")),
    ("sha-upper", _hash("jax", {"sha256": "A" * 64}), ("64 lowercase hex",)),
    ("sha-short", _hash("jax", {"sha256": "a" * 63}), ("64 lowercase hex",)),
    ("sha-missing", _hash("jax", {}), ("jax", "no sha256")),
    ("sha-int", _hash("jax", {"sha256": 7}), ("64 lowercase hex",)),
    ("conda-md5-only", _hash("cudatoolkit", {"md5": MD5_C}), ("md5 alone is not enough",)),
    ("conda-md5-bad", _hash("cudatoolkit", {"md5": "../x", "sha256": "b" * 64}), ("md5",)),
    ("hash-not-mapping", _hash("jax", "a" * 64), ("hash is a string",)),
    ("meta-null-sha", _conda_extra(sha256=None), ("may not set sha256",)),
    ("meta-null-md5", _conda_extra(md5=None), ("may not set md5",)),
    ("meta-url", _conda_extra(url="https://evil.example/x.conda"), ("may not set url",)),
    ("meta-name-version", _conda_extra(name="x", version="9"), ("may not set name, version",)),
    ("meta-subdir", _conda_extra(subdir="../.."), ("subdir",)),
    ("meta-build-number-type", _conda_extra(build_number="0"), ("build_number",)),
    # YAML's and JSON's booleans are no version and no build number (True == 1 in Python)
    ("meta-build-number-true", _conda_extra(build_number=True), ("build_number is true/false",)),
    (
        "conda-version-true",
        lambda d: package(d, "cudatoolkit").update(version=True),
        ("cudatoolkit", "version is true/false"),
    ),
    (
        "meta-missing",
        lambda d: d["metadata"]["custom_metadata"].pop("gpuenv.conda.cudatoolkit"),
        ("gpuenv.conda.cudatoolkit is missing (the record fields of",),
    ),
    ("meta-not-json", _custom("gpuenv.conda.cudatoolkit", "{"), ("not JSON",)),
    # structure
    ("top-list", lambda d: (d.clear(), d.update({"x": [1]})), ("unknown key",)),
    ("no-version", _drop("version"), ("version",)),
    ("version-2", _set(("version",), 2), ("version is 2",)),
    ("no-metadata", _drop("metadata"), ("metadata is missing",)),
    ("no-package", _drop("package"), ("package is missing",)),
    ("package-mapping", _set(("package",), {}), ("package is a mapping",)),
    ("package-str", _set(("package", 0), "jax"), ("package[0] is a string",)),
    ("name-int", _set(("package", 0, "name"), 5), ("package[0].name",)),
    ("version-int", _jax(version=5), ("jax", "version is an integer")),
    ("deps-list", _set(("package", 0, "dependencies"), ["numpy"]), ("dependencies is a list",)),
    ("pip-name-newline", _jax(name="jax\n--index-url http://evil"), ("not a package name",)),
    # a conda name may hold '+', a pip project name may not (PEP 508): pip's rule applies
    ("pip-name-conda-only", _jax(name="jax+cuda"), ("'jax+cuda'", "not a package name")),
    (
        "conda-name-dotdot",
        lambda d: package(d, "cudatoolkit").update(name="../x"),
        ("not a package name",),
    ),
    ("manager", _set(("package", 0, "manager"), "npm"), ("manager",)),
    ("unknown-package-key", _set(("package", 0, "post_install"), "x"), ("unknown key",)),
    ("source", _set(("package", 0, "source"), {"type": "url", "url": "x"}), ("source",)),
    ("package-platform", _set(("package", 0, "platform"), "win-64"), ("platform",)),
    ("duplicate", _duplicate, ("listed twice",)),
    ("platforms-two", _set(("metadata", "platforms"), ["linux-64", "win-64"]), ("exactly one",)),
    ("platform-unknown", _set(("metadata", "platforms"), ["linux-65"]), ("not a platform",)),
    ("custom-not-str", _custom("gpuenv.inputs_hash", 5), ("inputs_hash is an integer",)),
    ("not-gpuenv", _custom("gpuenv.format", "2"), ("not written by gpuenv",)),
    # the plan
    ("plan-not-json", _custom("gpuenv.plan", "{not json"), ("gpuenv.plan is not JSON",)),
    ("plan-empty", _custom("gpuenv.plan", "{}"), ("gpuenv.plan", "schema")),
    # strict like the pylock reader and --plan: a number JSON has not is no plan
    ("plan-nan", _custom("gpuenv.plan", '{"schema": NaN}'), ("gpuenv.plan is not JSON",)),
    ("plan-huge", _custom("gpuenv.plan", '{"schema": 1e999}'), ("gpuenv.plan is not JSON",)),
    (
        "plan-deep",
        _custom("gpuenv.plan", "[" * 5000 + "]" * 5000),
        ("gpuenv.plan is not JSON", "deeply"),
    ),
    ("plan-list", _custom("gpuenv.plan", "[]"), ("the plan is a list",)),
    (
        "plan-missing",
        lambda d: d["metadata"]["custom_metadata"].pop("gpuenv.plan"),
        ("gpuenv.plan is missing",),
    ),
    ("plan-python-path", _plan(lambda p: p.update(python="/tmp/evil/python")), ("never a path",)),
    (
        "plan-python-unicode-digits",
        _plan(lambda p: p.update(python="\u0663.\u0661\u0662")),
        ("X.Y",),
    ),
    ("plan-python-newline", _plan(lambda p: p.update(python="3.12\n")), ("never a path",)),
    ("plan-python-int", _plan(lambda p: p.update(python=3)), ("python is 3",)),
    ("meta-python-path", _custom("gpuenv.python", "../../bin/sh"), ("gpuenv.python",)),
    ("meta-python-other", _custom("gpuenv.python", "3.11"), ("gpuenv.python",)),
    ("plan-no-frameworks", _plan(lambda p: p.pop("frameworks")), ("frameworks",)),
    (
        "framework-no-version",
        _plan(lambda p: p["frameworks"]["jax"].pop("version")),
        ("frameworks.jax.version",),
    ),
    (
        "framework-unknown",
        _plan(lambda p: p["frameworks"].update(mxnet=p["frameworks"]["jax"])),
        ("'mxnet' is not a framework",),
    ),
    (
        "framework-not-object",
        _plan(lambda p: p["frameworks"].update(jax="0.4")),
        ("frameworks.jax is a string",),
    ),
    ("plan-pip-type", _plan(lambda p: p.update(pip="jax")), ("pip is not a list",)),
    ("plan-pip-item", _plan(lambda p: p.update(pip=[{"req": 1}])), ("pip[0]",)),
    (
        "plan-conda-type",
        _plan(lambda p: p.update(conda=[1, 2])),
        ("conda is not a list of strings",),
    ),
    ("plan-accelerator", _plan(lambda p: p.update(accelerator="tpu")), ("accelerator",)),
    ("plan-platform", _plan(lambda p: p.update(platform="win-64")), ("platform win-64",)),
    ("plan-gpu-type", _plan(lambda p: p.update(gpu=[1])), ("gpu is a list",)),
    (
        "plan-related",
        _plan(lambda p: p["frameworks"]["jax"].update(related={"x": 1})),
        ("related",),
    ),
]


@pytest.mark.parametrize("mutate,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_crafted_field_is_refused_by_name(
    mutate: Mutation, words: tuple[str, ...], tmp_path: Path
) -> None:
    data = load(write_valid(tmp_path / "valid.lock.yml", conda=True))
    mutate(data)
    path = dump(data, tmp_path / "crafted.lock.yml")
    with pytest.raises(LockfileError) as err:
        load_locked(path)
    message = str(err.value)
    assert exit_code(err.value) == USAGE_EXIT
    assert str(path) in message
    for word in words:
        assert word in message, message


def test_the_valid_lockfile_reads(tmp_path: Path) -> None:
    """The base every case above alters is accepted: each refusal is the mutation's doing."""
    locked = load_locked(write_valid(tmp_path / "valid.lock.yml", conda=True))
    assert [p.name for p in locked.pip] == ["jax", "numpy"]
    record = locked.conda[0]
    assert record["sha256"] == "b" * 64 and record["md5"] == MD5_C
    assert record["file_name"] == "cudatoolkit-11.2.2-h_0.tar.bz2"
    assert locked.python == "3.12"


@pytest.mark.parametrize(
    "content,words",
    [
        (b"", ("the file (a conda-lock v1 file) is missing",)),
        (b"[1, 2, 3]\n", ("is a list, expected a mapping",)),
        (b"{}\n", ("version",)),
        (b"version: 1\nmetadata: {a: [\n", ("not a YAML file",)),
        (b"\x80\x81garbage", ("not a YAML file",)),
        (b"!!python/object/apply:os.system ['echo pwned']\n", ("not a YAML file",)),
        (b"version: 1\nmetadata: &a {x: *a}\n", ("metadata has unknown key",)),
        (b"[" * 20000 + b"]" * 20000, ()),
    ],
    ids=["empty", "list", "mapping", "broken-yaml", "binary", "python-tag", "self-alias", "deep"],
)
def test_not_a_lockfile_is_refused(content: bytes, words: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "x.lock.yml"
    path.write_bytes(content)
    with pytest.raises(LockfileError) as err:
        load_locked(path)
    for word in words:
        assert word in str(err.value), str(err.value)


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.lock.yml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "make,words",
    [
        (_fifo, ("a pipe (FIFO)", "not a regular file")),
        (lambda _: Path("/dev/zero"), ("a device",)),
        (lambda _: Path("/dev/null"), ("a device",)),
        (lambda tmp: tmp, ("a folder",)),
    ],
    ids=["fifo", "dev-zero", "dev-null", "folder"],
)
def test_not_a_regular_file_is_refused_without_blocking(
    make: Callable[[Path], Path], words: tuple[str, ...], tmp_path: Path
) -> None:
    with pytest.raises(LockfileError) as err:
        load_locked(make(tmp_path))  # a FIFO with no writer would block a plain open()
    for word in words:
        assert word in str(err.value)


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge.lock.yml"
    with path.open("wb") as fh:
        fh.truncate(MAX_LOCKFILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(LockfileError, match="larger than 64 MiB"):
        load_locked(path)


def test_install_and_fetch_refuse_a_crafted_lockfile_with_exit_2(tmp_path: Path) -> None:
    data = load(write_valid(tmp_path / "valid.lock.yml"))
    package(data, "jax")["url"] = "https://files.example/p/..%2F..%2F..%2Fhome%2F.bashrc"
    path = dump(data, tmp_path / "crafted.lock.yml")
    for args in (
        ["install", str(path), "--name", "lab"],
        ["fetch", str(path), "-d", str(tmp_path / "house")],
    ):
        code, _, err = in_process(*args)
        assert code == 2, err
        assert "jax" in err and "not a plain file name" in err and "Traceback" not in err
    assert not (tmp_path / "house").exists()


def test_install_from_a_fifo_exits_2(tmp_path: Path) -> None:
    code, _, err = in_process("install", str(_fifo(tmp_path)), "--name", "lab")
    assert code == 2 and "pipe (FIFO)" in err


@pytest.mark.parametrize(
    "old,new,words",
    [
        (
            "url: https://files.example/p/jax-0.4.30-py3-none-any.whl",
            "url: index:///jax-0.4.30-py3-none-any.whl",
            ("index:///<project>/<file name>",),
        ),
        ("version: 11.2.2", "version: yes", ("cudatoolkit", "version is true/false")),
        ("version: 11.2.2", "version: true", ("cudatoolkit", "version is true/false")),
        ('{"build_number": 0,', '{"build_number": true,', ("build_number is true/false",)),
    ],
    ids=["portable-one-part", "conda-version-yes", "conda-version-true", "build-number-true"],
)
def test_install_refuses_these_lockfile_texts_with_one_message(
    old: str, new: str, words: tuple[str, ...], tmp_path: Path
) -> None:
    """As a user's file holds them (YAML 1.1 reads `yes` as a boolean): one message naming the
    field, exit 2, never a traceback, and nothing installed."""
    path = write_valid(tmp_path / "valid.lock.yml", conda=True)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    code, _, err = in_process("install", str(path), "--name", "lab")
    assert code == USAGE_EXIT, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err


def test_a_deep_file_is_one_message_without_libyaml_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # libyaml stops at its own nesting limit; PyYAML's pure-Python loader (where PyYAML was
    # built without libyaml) recurses until Python's limit
    import yaml  # type: ignore[import-untyped]

    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    path = tmp_path / "deep.lock.yml"
    path.write_bytes(b"[" * 5000 + b"]" * 5000)
    with pytest.raises(LockfileError, match="too deep or too large"):
        load_locked(path)
