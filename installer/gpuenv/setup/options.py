"""What setup is asked to do: the options of one run, the request merged with what earlier runs
of the same environment recorded, and `--split`'s one environment per framework."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

if TYPE_CHECKING:
    from gpuenv.lab.load import Lab
    from gpuenv.setup.record import SetupRecord


class SetupUsageError(GpuenvError, ValueError):
    """The request itself cannot be set up as given (exit 2)."""

    exit_code = USAGE_EXIT


@dataclass(frozen=True)
class SetupOptions:
    requirements: tuple[str, ...]
    name: str
    lab: Optional[Lab] = None
    python: Optional[str] = None
    no_gpu: bool = False
    require_gpu: bool = False
    dry_run: bool = False
    force: bool = False
    packages: tuple[str, ...] = ()  # extra packages locked beside the frameworks
    jupyter: bool = False  # also install ipykernel and register a kernel
    allow_cpu_fallback: bool = False  # a CPU build where the planned GPU one cannot be locked

    @property
    def wants_kernel(self) -> bool:
        return self.jupyter or bool(self.lab and self.lab.jupyter)

    def extra_packages(self) -> tuple[str, ...]:
        """The lab's packages, then this command's (a later one for a project wins), and
        ipykernel when a kernel is wanted."""
        from gpuenv.resolve.packages import merge_packages

        kernel = ("ipykernel",) if self.jupyter else ()
        return merge_packages(self.lab.packages if self.lab else (), self.packages, kernel)


@dataclass(frozen=True)
class SetupRequest:
    """Frameworks and extra packages for this run, after the recorded request is merged in."""

    frameworks: tuple[str, ...]
    packages: tuple[str, ...]
    jupyter: bool
    recorded_note: Optional[str]  # what was taken from the record, said to the user


def merge_request(
    requirements: tuple[str, ...],
    record: Optional[SetupRecord],
    *,
    fresh: bool,
    jupyter: bool,
    adding: bool,
) -> SetupRequest:
    """The command line's frameworks and packages, with what earlier runs of the same
    environment recorded (unless `fresh`), so a rebuild keeps added packages."""
    from gpuenv.resolve.packages import merge_packages, split_requirements

    frameworks, packages = split_requirements(requirements)
    kept = None if fresh else record
    recorded_frameworks = kept.frameworks if kept else ()
    recorded_packages = kept.packages if kept else ()
    note = None
    if not frameworks and (adding or not packages) and recorded_frameworks:
        frameworks = recorded_frameworks
        note = f"using the frameworks recorded for this environment: {', '.join(frameworks)}"
    if packages and not frameworks:
        raise SetupUsageError(
            f"{', '.join(packages)}: name a framework to set up beside them (torch, tensorflow,"
            " jax), or use `gpuenv add` for an environment setup made"
        )
    if recorded_packages:
        left = [p for p in recorded_packages if p not in packages]
        if left:
            extra = f"keeping the packages added earlier: {', '.join(left)} (--fresh drops them)"
            note = f"{note}; {extra}" if note else extra
    return SetupRequest(
        frameworks,
        merge_packages(recorded_packages, packages),
        jupyter or bool(kept and kept.jupyter),
        note,
    )


def split_by_framework(requirements: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """`--split`: (requirements, environment name) of each environment, one per framework,
    named after it, each with the extra packages."""
    from gpuenv.resolve.packages import split_requirements
    from gpuenv.resolve.requirements import parse_requirements

    frameworks, packages = split_requirements(requirements)
    groups: dict[str, list[str]] = {}
    for text in frameworks:
        (req,) = parse_requirements([text])
        groups.setdefault(req.framework, []).append(text)
    if len(groups) < 2:
        raise SetupUsageError("--split needs two or more frameworks (torch tensorflow ...)")
    return [((*texts, *packages), framework) for framework, texts in groups.items()]
