"""jax's draft: its pure wheel's extras, the jaxlib pin and each CUDA plugin's METADATA."""

from __future__ import annotations

import re

from packaging.version import Version

from gpuenv.index.remote_wheel import RangeReader
from gpuenv.maint.draft.collect import (
    metadata_of,
    metadata_requirements,
)
from gpuenv.maint.draft.model import (
    CUDA_LIB,
    PLATFORM_ORDER,
    DraftError,
    Getter,
    Lister,
)
from gpuenv.maint.draft.render import py_key, q, toml_list
from gpuenv.recipes.model import Framework


def draft_jax(
    fw: Framework,
    version: Version,
    index: str,
    listing: Lister,
    fetch: Getter,
    reader: RangeReader,
) -> str:
    jax_meta, jax_files = metadata_of(listing, index, "jax", version, fetch, reader)
    if jax_meta is None or jax_files is None:
        raise DraftError(f"no jax {version} wheel with METADATA on the default index")
    jax_wheel = next(iter(jax_files.sample.values()))[0]
    requirements = metadata_requirements(jax_meta)
    jaxlib = next(
        (
            m.group(1)
            for r, extra in requirements
            if extra is None and (m := re.match(r"^jaxlib\s*(?:==|<=|>=)\s*([0-9][0-9.]*)", r))
        ),
        str(version),
    )
    _, jaxlib_files = metadata_of(listing, index, "jaxlib", Version(jaxlib), fetch, reader)
    pythons = jaxlib_files.pythons if jaxlib_files else {}
    body = [
        f"# Drafted by `gpuenv recipes draft jax {version}`: review every row against its source,",
        "# fill in the TODOs (CUDA, cuDNN and architectures: .bazelrc at the jax-v tag), then set",
        "# verified = true where you checked the artifact.",
        "",
        "[[release]]",
        f"version = {q(str(version))}",
        "# released = YYYY-MM-DD   TODO: the release date",
        f"jaxlib = {q(jaxlib)}",
        f"source = {q(f'METADATA of {jax_wheel}; Python tags of the jaxlib-{jaxlib}-*.whl files')}",
        "verified = false",
        "[release.python]",
    ]
    for platform in PLATFORM_ORDER:
        if platform in pythons:
            body.append(f"{platform} = {toml_list(sorted(pythons[platform], key=py_key))}")
    if jaxlib_files:
        platforms = [p for p in PLATFORM_ORDER if p in jaxlib_files.platforms]
        body += [
            "",
            "[[release.build]]",
            'variant = "cpu"',
            f"platforms = {toml_list(platforms)}",
            f"pypi_default = {toml_list(platforms)}",
            f"source = {q(f'Wheel files jaxlib-{jaxlib}-cp*-<platform>.whl on the default index')}",
            "verified = false",
        ]
    extras = [e for r, e in requirements if e and re.fullmatch(r"cuda\d+", e)]
    for extra in dict.fromkeys(extras):
        plugin = next(
            (
                re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0]
                for r, e in requirements
                if e == extra and re.match(rf"^jax[-_]{extra}[-_]plugin", r)
            ),
            None,
        )
        if plugin is None:
            continue
        meta, files = metadata_of(listing, index, plugin, version, fetch, reader)
        if meta is None or files is None:
            continue
        libs = [r for r, e in metadata_requirements(meta) if e == "with-cuda" and CUDA_LIB.match(r)]
        floor = next(
            (
                m.group(1)
                for lib in libs
                if (m := re.search(r"nvidia-cudnn-cu\d+.*>=\s*(\d+\.\d+\.\d+)", lib))
            ),
            None,
        )
        wheel = next(iter(files.sample.values()))[0]
        body += [
            "",
            "[[release.build]]",
            f"variant = {q(extra)}",
            f"platforms = {toml_list(p for p in PLATFORM_ORDER if p in files.platforms)}",
            'cuda = "TODO"  # HERMETIC_CUDA_VERSION in .bazelrc at the jax-v tag',
        ]
        if floor:
            body.append(f"cudnn = {q(floor)}  # the plugin's floor; the build's own is in .bazelrc")
        body += [
            'archs = "TODO"  # the CUDA compute capabilities in .bazelrc at the jax-v tag',
            'package = "jax"',
            f"extra = {q(extra)}",
            f"pip_libs = {toml_list(libs)}",
            f"source = {q(f'METADATA of {wheel}, Requires-Dist with extra == with-cuda; METADATA of {jax_wheel}, extra {extra}')}",
            "verified = false",
        ]
    return "\n".join(body) + "\n"
