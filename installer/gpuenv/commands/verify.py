"""`gpuenv verify`: does the environment do what its plan promised? Probes run inside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from gpuenv.commands import json_output
from gpuenv.commands.env_options import env_options, location
from gpuenv.output.wrap import echo
from gpuenv.verify import Expectations, VerifyError, verify_environment

VERIFY_FAILED_EXIT = 1  # the environment does not do what its plan promised
USAGE_EXIT = 2


def load_expectations(path: Path) -> Expectations:
    """An Expectations JSON file, or a Plan JSON file (`gpuenv resolve --json`)."""
    try:
        return Expectations.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise click.UsageError(
            f"--expect-json {path}: not an Expectations or Plan file ({exc})"
        ) from exc


def stored_expectations(env_dir: Path) -> Expectations:
    """The plan an environment was installed from (gpuenv.verify.installed); a corrupt one is a
    usage error (exit 2)."""
    from gpuenv.verify.installed import UnreadablePlan
    from gpuenv.verify.installed import stored_expectations as stored

    try:
        return stored(env_dir)
    except UnreadablePlan as exc:
        raise click.UsageError(str(exc)) from exc.__cause__


def run_verify(
    python: Path, expectations: Optional[Expectations], as_json: bool, timeout: float
) -> int:
    """Verify, print the report (stdout) and one verdict line (stderr); the exit status."""
    try:
        report = verify_environment(python, expectations, timeout=timeout)
    except VerifyError as exc:
        echo(f"gpuenv: error: {exc}", err=True)
        json_output.emit_error(str(exc), USAGE_EXIT)
        return USAGE_EXIT
    if as_json:
        json_output.emit(report.to_json())
    else:
        echo(report.render())
    if report.ok:
        return 0
    failed = [f.name for f in report.frameworks if not f.ok] or ["the environment"]
    first = next((p for f in report.frameworks for p in f.problems), None)
    first = first or (report.problems[0] if report.problems else "see the report")
    echo(f"gpuenv: verify failed for {', '.join(failed)}: {first}", err=True)
    return VERIFY_FAILED_EXIT


@click.command("verify")
@click.option(
    "--python",
    "python",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The environment's interpreter to verify.",
)
@click.option(
    "--expect-json",
    "expect_json",
    type=click.Path(path_type=Path, dir_okay=False),
    help="What it should do: an Expectations or Plan JSON (default: the plan the environment"
    " was locked from; with --python, that the CPU works).",
)
@json_output.json_option("Print the Report as JSON.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds each framework's probe may take.",
)
@click.option(
    "--health",
    is_flag=True,
    help="A quick check for a Slurm prolog or a health check: installed versions, the"
    " interpreter, the GPU and driver; silent when all is well, one line per problem and"
    " exit 1 otherwise; --timeout bounds it as a whole (default 10s here).",
)
@click.option(
    "--import", "imports", is_flag=True, help="With --health: also import each framework."
)
@env_options
@click.pass_context
def verify(
    ctx: click.Context,
    python: Optional[Path],
    expect_json: Optional[Path],
    as_json: bool,
    timeout: float,
    health: bool,
    imports: bool,
    name: Optional[str],
    prefix: Optional[Path],
) -> None:
    """Check that an environment's frameworks import, see the GPU they should, and compute.

    By default the environment gpuenv installed (--name default), against the plan it was
    locked from.
    """
    if health or imports:
        ctx.exit(_health(ctx, name, prefix, python, expect_json, imports, as_json, timeout))
    expectations = load_expectations(expect_json) if expect_json else None
    if python is None:
        from gpuenv.envs.errors import EnvironmentNotFound
        from gpuenv.envs.store import interpreter
        from gpuenv.verify.installed import installed_environment

        try:
            env_dir = installed_environment(location(name, prefix))
        except EnvironmentNotFound as exc:
            raise click.UsageError(str(exc)) from None
        if expectations is None:  # first: a corrupt entry says so, not "no interpreter"
            expectations = stored_expectations(env_dir)
        python = interpreter(env_dir)
    ctx.exit(run_verify(python, expectations, as_json, timeout))


def _health(
    ctx: click.Context,
    name: Optional[str],
    prefix: Optional[Path],
    python: Optional[Path],
    expect_json: Optional[Path],
    imports: bool,
    as_json: bool,
    timeout: float,
) -> int:
    from gpuenv.verify.health import check_health

    if python is not None or expect_json is not None:
        raise click.UsageError("--health checks an environment of the store: --name or --prefix")
    if imports and not ctx.params.get("health"):
        raise click.UsageError("--import goes with --health")
    if ctx.get_parameter_source("timeout") == click.core.ParameterSource.DEFAULT:
        timeout = 10.0
    where = location(name, prefix)
    result = check_health(where, timeout=timeout, imports=imports)
    if as_json:
        json_output.emit(result.to_json())
    for problem in result.problems:
        echo(f"gpuenv verify --health: {where.name}: {problem}", err=True)
    return 0 if result.ok else VERIFY_FAILED_EXIT
