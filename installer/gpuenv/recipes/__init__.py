"""The knowledge base (`recipes/`): load it, check it, compare it with the index, draft new rows.

Modules: `load` (typed records from the TOML files), `check` (consistency beyond loading),
`online` (against what the index publishes), `archs` (the architecture-coverage rule).
The names other stages use are re-exported here.
"""

from gpuenv.recipes.load import (
    FRAMEWORK_FILES,
    PLATFORM_PROJECT,
    PLATFORMS,
    RECIPES_ENV,
    AmbiguousGpu,
    ArchSet,
    Build,
    CudaMajor,
    CudnnRelease,
    Framework,
    FrameworkDriver,
    Generation,
    GpuMatch,
    GpuRecord,
    KnowledgeBase,
    RecipeError,
    Release,
    Sourced,
    Toolkit,
    load_knowledge_base,
    major_minor,
    normalize_gpu_name,
    recipes_dir,
)

__all__ = [
    "FRAMEWORK_FILES",
    "PLATFORMS",
    "PLATFORM_PROJECT",
    "RECIPES_ENV",
    "AmbiguousGpu",
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
    "RecipeError",
    "Release",
    "Sourced",
    "Toolkit",
    "load_knowledge_base",
    "major_minor",
    "normalize_gpu_name",
    "recipes_dir",
]
