"""The draft as TOML rows for review: every row says where its facts come from."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from gpuenv.maint.draft.model import (
    PLATFORM_ORDER,
    Build,
    Facts,
)
from gpuenv.recipes.model import Framework
from gpuenv.versions import version_key


def q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(q(i) for i in items) + "]"


py_key = version_key


def render(fw: Framework, version: Version, builds: list[Build], facts: dict[int, Facts]) -> str:
    name = fw.name
    default = [b for b in builds if b.index is None]
    pythons: dict[str, set[str]] = {}
    for b in default or builds:
        for platform, versions in b.pythons.items():
            pythons.setdefault(platform, set()).update(versions)
    files = sorted({n for b in builds for n, _ in b.sample.values()})
    lines = [
        f"# Drafted by `gpuenv recipes draft {name} {version}`: review every row against its",
        "# source, fill in the TODOs, then set verified = true where you checked the artifact.",
        "",
    ]
    archsets: list[str] = []
    body = [
        "[[release]]",
        f"version = {q(str(version))}",
        "# released = YYYY-MM-DD   TODO: the release date (the index's upload time of its files)",
        f"source = {q('file lists of the indexes (wheel names: ' + ', '.join(files[:3]) + (', ...' if len(files) > 3 else '') + ')')}",
        "verified = false",
        f"note = {q('drafted from the index and the wheels; review before use')}",
        "[release.python]",
    ]
    for platform in PLATFORM_ORDER:
        if platform in pythons:
            body.append(f"{platform} = {toml_list(sorted(pythons[platform], key=py_key))}")
    for b in builds:
        f = facts[id(b)]
        variant = variant_name(name, b, f)
        body += ["", "[[release.build]]", f"variant = {q(variant)}"]
        body.append(f"platforms = {toml_list(p for p in PLATFORM_ORDER if p in b.platforms)}")
        if f.cuda:
            body.append(f"cuda = {q(f.cuda)}")
            if f.cudnn:
                body.append(f"cudnn = {q(f.cudnn)}")
            if f.sass or f.ptx:
                key = f"{name}-{version}-{variant}".replace(".", "_")
                archsets += [
                    f"[archsets.{key}]",
                    f"sass = {toml_list(f.sass)}",
                    f"ptx = {toml_list(f.ptx)}",
                    f"source = {q('; '.join(s for s in f.sources if 'build_info' in s))}",
                    "verified = false",
                    "",
                ]
                body.append(f"archs = {q(key)}")
            else:
                body.append(
                    'archs = "TODO"  # the architecture list is not in the wheel\'s text files:'
                    " read the build script at the release tag"
                )
        if b.index:
            body += [f"index = {q(b.index)}", f"local = {q(b.local)}"]
        elif default and f.cuda:
            body.append(
                f"pypi_default = {toml_list(p for p in PLATFORM_ORDER if p in b.platforms)}"
            )
        if f.pip_libs:
            body.append(f"pip_libs = {toml_list(f.pip_libs)}")
        source = "; ".join(f.sources) or "file list of the index"
        body += [f"source = {q(source)}", "verified = false"]
    return "\n".join(lines + archsets + body) + "\n"


def variant_name(framework: str, build: Build, facts: Facts) -> str:
    if build.local:
        return build.local.lstrip("+")
    if facts.cuda is None:
        return "cpu"
    if framework == "tensorflow":
        return "cuda"
    return "cu" + facts.cuda.replace(".", "")


# --- jax: one pure wheel, CUDA through extras and plugin wheels ------------------------------
