"""The shape of a Plan read back from a lockfile (untrusted): every field's type, a Python that
is X.Y (it reaches `uv venv --python`, so never a path), frameworks and platforms gpuenv knows.
Plan.from_json trusts its input; this says what is wrong with it first, naming the field."""

from __future__ import annotations

import re
from typing import Any, Optional

from gpuenv.recipes import FRAMEWORK_FILES, PLATFORMS
from gpuenv.resolve.plan import PLAN_SCHEMA

PYTHON_VERSION = re.compile(r"[0-9]+\.[0-9]+")  # ASCII: \d also matches other digits
ACCELERATORS = ("cuda", "cpu", "mps")
_NULL = type(None)
_STR_LISTS = (
    "conda",
    "companions",
    "constraints",
    "warnings",
    "reasons",
    "fixes",
    "exclude_newer_exempt",
)
_OPTIONAL_STR = ("glibc", "driver", "exclude_newer")
_PROJECT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")
_FRAMEWORK_FIELDS: dict[str, tuple[type, ...]] = {
    "version": (str,),
    "variant": (str,),
    "cuda": (str, _NULL),
    "cudnn": (str, _NULL),
    "package": (str, _NULL),
    "released": (str, _NULL),
    "gpu": (bool, _NULL),
    "related": (dict, _NULL),
    "nvidia": (list, _NULL),
}


def check_plan(data: Any) -> Optional[str]:
    """What is wrong with a plan's JSON, or None when Plan.from_json may read it."""
    if not isinstance(data, dict):
        return f"the plan is {_kind(data)}, expected an object"
    schema = data.get("schema")
    # the integer itself: JSON's true and 1.0 are equal to 1 in Python, and no plan gpuenv wrote
    if type(schema) is not int or schema != PLAN_SCHEMA:
        return f"schema is {schema!r:.20}, expected {PLAN_SCHEMA}"
    python = data.get("python")
    if not isinstance(python, str) or not PYTHON_VERSION.fullmatch(python):
        return f"python is {python!r:.60}; a Python is X.Y (such as 3.12), never a path"
    if data.get("platform") not in PLATFORMS:
        return f"platform is {data.get('platform')!r:.40}, not one of {', '.join(PLATFORMS)}"
    if data.get("accelerator") not in ACCELERATORS:
        return (
            f"accelerator is {data.get('accelerator')!r:.40}, not one of {', '.join(ACCELERATORS)}"
        )
    for key in _OPTIONAL_STR:
        if not isinstance(data.get(key), (str, _NULL)):
            return f"{key} is {_kind(data[key])}, expected a string or null"
    if not isinstance(data.get("gpu"), (dict, _NULL)):
        return f"gpu is {_kind(data['gpu'])}, expected an object or null"
    if not isinstance(data.get("knowledge_base", ""), str):
        return "knowledge_base is not a string"
    for key in _STR_LISTS:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{key} is not a list of strings"
    for project in data.get("exclude_newer_exempt", []):
        if not _PROJECT.fullmatch(project):  # each becomes one of uv's arguments
            return f"exclude_newer_exempt: {project!r:.60} is not a project name"
    pip = data.get("pip", [])
    if not isinstance(pip, list):
        return "pip is not a list"
    for i, req in enumerate(pip):
        if not isinstance(req, dict) or not isinstance(req.get("requirement"), str):
            return f"pip[{i}] is not an object with a requirement string"
        if not isinstance(req.get("index"), (str, _NULL)):
            return f"pip[{i}].index is not a string or null"
    if "rejected" in data:
        return "rejected is not part of a locked plan"
    return _check_frameworks(data.get("frameworks"))


def _check_frameworks(frameworks: Any) -> Optional[str]:
    if not isinstance(frameworks, dict) or not frameworks:
        return "frameworks is missing or empty"
    for name, choice in frameworks.items():
        if name not in FRAMEWORK_FILES:
            return f"frameworks: {name!r:.40} is not a framework gpuenv knows ({', '.join(FRAMEWORK_FILES)})"
        if not isinstance(choice, dict):
            return f"frameworks.{name} is {_kind(choice)}, expected an object"
        for field in ("version", "variant"):
            if not isinstance(choice.get(field), str) or not choice[field]:
                return f"frameworks.{name}.{field} is missing"
        for field, kinds in _FRAMEWORK_FIELDS.items():
            if field in choice and not isinstance(choice[field], kinds):
                return f"frameworks.{name}.{field} is {_kind(choice[field])}"
        if not all(isinstance(v, str) for v in choice.get("nvidia") or []):
            return f"frameworks.{name}.nvidia is not a list of requirements"
        related = choice.get("related") or {}
        if not all(isinstance(v, str) for v in related.values()):
            return f"frameworks.{name}.related is not a mapping of names to versions"
    return None


def _kind(value: Any) -> str:
    from gpuenv.fs.type_names import type_name

    return type_name(value)
