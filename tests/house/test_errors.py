"""Every exception class gpuenv defines is either a user error (a GpuenvError with a documented
exit status) or named here as internal, with the reason it never reaches the user (issue 17:
exit statuses no longer hang on class-name strings)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from gpuenv.errors import EXIT_STATUSES, GpuenvError, exit_code

PACKAGE = Path(__file__).resolve().parents[2] / "installer" / "gpuenv"
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
)

# class -> why it never reaches the CLI as it is
INTERNAL = {
    "gpuenv.detect._run.ProbeError": "a probe that failed: detect records it and goes on",
    "gpuenv.lock.probe_cache.ProjectMissing": "an index page that is absent: the probe's answer",
    "gpuenv.lock.probe_cache.HostGone": "an index that went away: the probe records it",
    "gpuenv.recipes.gpu_names.AmbiguousGpu": "a name lookup's answer; recipes.gpu_lookup turns it into a TargetError naming the candidates",
    "gpuenv.recipes.gpu_names.AmbiguousGpuName": "the same, for a brand name that fits several models",
    "gpuenv.envs.shell_quote.UnquotableError": "a quoting answer; activation turns it into an ActivationError (exit 2)",
    "gpuenv.index.simple.PageTooLarge": "an OSError on purpose: every index reader reports it as that index failing (exit 5)",
    "gpuenv.index.bounded_http.TooSlow": "a deadline passed: remote_wheel turns it into BoundExceeded naming the bound, simple into requests.Timeout",
    "gpuenv.index.bounded_http.BrokenBody": "a body cut short: remote_wheel turns it into a WheelReadError, simple into requests.ConnectionError (retried)",
    "gpuenv.envs.artifacts._Transient": "a download try that failed: the retry loop's signal, never raised out of it",
    "gpuenv.gpucheck.wheelhouse.WheelhouseError": "the real-GPU recording tool (python -m gpuenv.gpucheck), outside the CLI",
    "gpuenv.gpucheck.promote.PromoteError": "the real-GPU recording tool, outside the CLI",
    "gpuenv.gpucheck.run.CheckError": "the real-GPU recording tool, outside the CLI",
}


def defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in MODULES:
        if name.endswith("__main__") or ".verify.probes" in name:
            continue  # scripts: running them is not importing them
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == name:
                found[f"{name}.{cls.__qualname__}"] = cls
    return found


EXCEPTIONS = defined_exceptions()


def test_the_walk_finds_the_package_s_errors() -> None:
    assert "gpuenv.lock.errors.LockfileError" in EXCEPTIONS
    assert len(EXCEPTIONS) >= 30


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_every_error_has_an_exit_status_or_a_reason(name: str) -> None:
    cls = EXCEPTIONS[name]
    if name in INTERNAL:
        assert not issubclass(cls, GpuenvError), f"{name} has an exit status: drop it from INTERNAL"
        return
    assert issubclass(cls, GpuenvError), (
        f"{name}: derive it from GpuenvError, or say in INTERNAL why not"
    )
    assert cls.exit_code in EXIT_STATUSES


def test_internal_names_exist() -> None:
    assert set(INTERNAL) <= set(EXCEPTIONS)


@pytest.mark.parametrize(
    ("name", "status"),
    [
        # the statuses the README documents, for the errors users meet most
        ("gpuenv.machine.MachineError", 2),
        ("gpuenv.resolve.resolver.ResolveError", 3),
        ("gpuenv.recipes.model.RecipeError", 4),
        ("gpuenv.lock.errors.SourceUnreachableError", 5),
        ("gpuenv.lock.errors.UnsatisfiableError", 3),
        ("gpuenv.lock.errors.LockfileError", 2),
        ("gpuenv.lock.errors.UntrustedOriginError", 2),  # the lockfile-origin rule
        ("gpuenv.lock.errors.LockError", 1),
        ("gpuenv.envs.errors.HashMismatchError", 1),
        ("gpuenv.envs.errors.EnvironmentNotFound", 2),
        ("gpuenv.envs.errors.CorruptEnvironment", 2),
    ],
)
def test_documented_statuses(name: str, status: int) -> None:
    assert exit_code(EXCEPTIONS[name]("x")) == status


def test_anything_else_is_a_bug() -> None:
    assert exit_code(ValueError("x")) is None
    assert exit_code(KeyboardInterrupt()) is None
