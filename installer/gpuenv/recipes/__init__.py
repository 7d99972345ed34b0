"""The knowledge base (`recipes/`): load it, check it, compare it with the index, draft new rows.

Modules: `model` (the records), `kb` (the KnowledgeBase value and its look-ups), `gpu_names`
(GPU names and PCI ids), `parse` (TOML rows -> records), `kb_cache` (loading, cached by
content), `check` (consistency beyond loading), `online` (against what the index publishes),
`archs` (the architecture-coverage rule). The names other stages use load from here on first
use (gpuenv._lazy): a stage that needs only a record type does not load the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuenv._lazy import lazy_attributes

if TYPE_CHECKING:
    from gpuenv.recipes.gpu_names import (
        AmbiguousGpu,
        AmbiguousGpuName,
        GpuMatch,
        normalize_gpu_name,
    )
    from gpuenv.recipes.kb import KnowledgeBase
    from gpuenv.recipes.kb_cache import RECIPES_ENV, load_knowledge_base, recipes_dir
    from gpuenv.recipes.model import (
        PLATFORM_PROJECT,
        PLATFORMS,
        ArchSet,
        Build,
        CudaMajor,
        CudnnRelease,
        Framework,
        FrameworkDriver,
        Generation,
        GpuRecord,
        NvidiaLibrary,
        RecipeError,
        Release,
        Sourced,
        Toolkit,
    )
    from gpuenv.recipes.parse import FRAMEWORK_FILES
    from gpuenv.versions import major_minor

__all__ = [
    "FRAMEWORK_FILES",
    "PLATFORMS",
    "PLATFORM_PROJECT",
    "RECIPES_ENV",
    "AmbiguousGpu",
    "AmbiguousGpuName",
    "ArchSet",
    "Build",
    "CudaMajor",
    "CudnnRelease",
    "Framework",
    "FrameworkDriver",
    "Generation",
    "GpuMatch",
    "GpuRecord",
    "KnowledgeBase",
    "NvidiaLibrary",
    "RecipeError",
    "Release",
    "Sourced",
    "Toolkit",
    "load_knowledge_base",
    "major_minor",
    "normalize_gpu_name",
    "recipes_dir",
]

_MODEL = "gpuenv.recipes.model"
_HOMES = {
    **dict.fromkeys(
        (
            "PLATFORMS",
            "PLATFORM_PROJECT",
            "ArchSet",
            "Build",
            "CudaMajor",
            "CudnnRelease",
            "Framework",
            "FrameworkDriver",
            "Generation",
            "GpuRecord",
            "NvidiaLibrary",
            "RecipeError",
            "Release",
            "Sourced",
            "Toolkit",
        ),
        _MODEL,
    ),
    **dict.fromkeys(
        ("AmbiguousGpu", "AmbiguousGpuName", "GpuMatch", "normalize_gpu_name"),
        "gpuenv.recipes.gpu_names",
    ),
    "KnowledgeBase": "gpuenv.recipes.kb",
    "RECIPES_ENV": "gpuenv.recipes.kb_cache",
    "load_knowledge_base": "gpuenv.recipes.kb_cache",
    "recipes_dir": "gpuenv.recipes.kb_cache",
    "FRAMEWORK_FILES": "gpuenv.recipes.parse",
    "major_minor": "gpuenv.versions",
}
__getattr__ = lazy_attributes(__name__, _HOMES)
