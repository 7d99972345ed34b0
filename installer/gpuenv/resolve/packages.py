"""The packages people add beside a framework (`gpuenv setup torch jupyterlab pandas`, or a lab
file's `packages`): which requirements are frameworks the resolver plans, which are extra
packages locked with them, and the one rule an extra package must meet wherever it is given."""

from __future__ import annotations

from gpuenv.resolve.requirements import RequirementError, is_framework_name


def split_requirements(texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(framework requirements, extra packages), each in the order given."""
    frameworks: list[str] = []
    packages: list[str] = []
    for text in texts:
        (frameworks if is_framework_name(text) else packages).append(text)
    return tuple(frameworks), tuple(check_package(p) for p in packages)


def check_package(text: str) -> str:
    """An extra package as a plain `name[extras] specifier`; anything that could point the lock
    at arbitrary code (a URL, a path) or that gpuenv would silently ignore (a marker) is refused."""
    from packaging.requirements import InvalidRequirement, Requirement  # see merge_packages

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        why = (
            str(exc).splitlines()[0] if str(exc) else "bad syntax"
        )  # packaging draws a caret below
        raise RequirementError(f"{text!r} is not a requirement ({why})") from None
    if req.url:
        raise RequirementError(
            f"{text!r}: direct URLs are not allowed; name a package on the configured index"
        )
    if req.marker is not None:
        raise RequirementError(
            f"{text!r}: environment markers are not supported for extra packages; gpuenv locks"
            " for one machine, so leave the marker out"
        )
    return str(req)


def project_name(text: str) -> str:
    """The PEP 503 normalised project a requirement names (`Foo_Bar[x]>=1` -> `foo-bar`)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return canonicalize_name(Requirement(text).name)


def merge_packages(*groups: tuple[str, ...]) -> tuple[str, ...]:
    """Packages from several places (a lab file, an earlier setup, this command), one entry per
    project: a later group's requirement for a project replaces an earlier one's."""
    if not any(groups):
        return ()
    # packaging's requirement parser costs ~8 ms of imports (tokenizer, markers, tags): only
    # runs with extra packages pay it, not a `setup` no-op without any
    merged: dict[str, str] = {}
    for group in groups:
        for text in group:
            merged[project_name(text)] = text
    return tuple(merged.values())
