"""`gpuenv recipes check [--online [--artifacts]]`, `recipes verify --artifacts`, `recipes draft`:
validate the knowledge base, measure it against the wheels, draft new rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import click

from gpuenv.commands.json_output import emit_result, json_option
from gpuenv.output import shown
from gpuenv.output.redact import redact_text
from gpuenv.output.wrap import echo
from gpuenv.recipes import load_knowledge_base
from gpuenv.recipes.check import check

if TYPE_CHECKING:
    from gpuenv.maint.verify import Reading


@click.group("recipes")
def recipes() -> None:
    """The knowledge base (recipes/): check it, verify its arch lists against the wheels, draft
    rows for a new release."""


@recipes.command("check")
@click.option(
    "--online", is_flag=True, help="Also compare with what the configured package index publishes."
)
@click.option(
    "--artifacts",
    is_flag=True,
    help="With --online: also read every CUDA build's wheel (its fatbins) and compare its"
    " architectures with the rows (downloads each wheel's shared libraries).",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@json_option("Print the findings and counts as JSON.")
@click.pass_context
def check_command(
    ctx: click.Context, online: bool, artifacts: bool, strict: bool, as_json: bool
) -> None:
    """Check the knowledge base: every row sourced and consistent (--online: against the indexes)."""
    kb = load_knowledge_base()
    findings = check(kb)
    if artifacts and not online:
        raise click.UsageError("--artifacts reads wheels from the index: it needs --online")
    if online:
        from gpuenv.index.config import default_index_url
        from gpuenv.maint.online import compare

        index = default_index_url()
        echo(f"comparing with {redact_text(index)}", err=True)
        findings += compare(kb, index)
        from gpuenv.index.simple import project_files
        from gpuenv.maint.draft.collect import get_small
        from gpuenv.maint.online_pins import pin_findings

        findings += pin_findings(kb, index, project_files, get_small)
        if artifacts:
            from gpuenv.index.simple import file_sha256s, project_files
            from gpuenv.maint.verify import artifact_findings

            findings += artifact_findings(kb, index, project_files, file_sha256s)
    if not as_json:
        for finding in findings:
            echo(shown(redact_text(str(finding))))  # it may quote the index's URL
    errors = [f for f in findings if f.level == "error" or strict]
    counts = {
        "frameworks": len(kb.frameworks),
        "releases": sum(len(f.releases) for f in kb.frameworks.values()),
        "gpus": len(kb.gpus),
        "toolkits": len(kb.toolkits),
        "cudnn": len(kb.cudnn),
    }
    if as_json:
        emit_result(
            ctx,
            ok=not errors,
            exit_status=1,
            errors=len(errors),
            warnings=len(findings) - len(errors),
            strict=strict,
            findings=[f.to_json() for f in findings],
            counts=counts,
        )
        if errors:
            raise SystemExit(1)
        return
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    news = sum(1 for f in findings if f.upstream)
    upstream = (
        f"; {news} of them upstream news (record with `gpuenv recipes draft`)" if news else ""
    )
    echo(f"{len(errors)} errors, {len(findings) - len(errors)} warnings{upstream} ({summary})")
    if errors:
        raise SystemExit(1)


@recipes.command("draft")
@click.argument("framework")
@click.argument("version")
@click.option(
    "--index",
    "indexes",
    multiple=True,
    help="Another per-variant index to read (e.g. a new CUDA folder of the PyTorch index).",
)
def draft_command(framework: str, version: str, indexes: tuple[str, ...]) -> None:
    """Draft the knowledge-base rows of a new FRAMEWORK VERSION from its wheels, for review.

    Reads the default index's and the framework's per-variant indexes' file lists, the wheels'
    METADATA and (with range requests) torch/version.py or TensorFlow's build_info.py.
    """
    from gpuenv.index.config import default_index_url
    from gpuenv.maint.draft import DraftError, draft

    kb = load_knowledge_base()
    if framework not in kb.frameworks:
        known = ", ".join(sorted(kb.frameworks))
        raise click.UsageError(f"unknown framework {framework!r}; known: {known}")
    for index in indexes:
        if not index.startswith(("https://", "http://", "file://")):
            raise click.UsageError(f"--index {index!r}: expected an http(s):// or file:// URL")
    try:
        text = draft(kb, framework, version, default_index_url(), extra_indexes=indexes)
    except DraftError as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:  # requests' errors are OSErrors too: the index did not answer
        echo(f"gpuenv: error: could not read the index: {redact_text(str(exc))}", err=True)
        raise SystemExit(5) from None
    click.echo(redact_text(text), nl=False)


@recipes.command("verify")
@click.option(
    "--artifacts",
    is_flag=True,
    required=True,
    help="Read the architectures from the wheels' fatbins (the only kind of verification yet).",
)
@click.option("--framework", help="Only this framework (tensorflow, torch, jax).")
@click.option("--release", help="Only this release (needs --framework).")
@click.option("--platform", default="linux-64", show_default=True, help="Conda platform.")
@click.option("--index", help="Read the wheels from this index instead of the default one.")
@json_option("Print every reading (per wheel, per library) and the findings as JSON.")
@click.pass_context
def verify_command(
    ctx: click.Context,
    artifacts: bool,
    framework: Optional[str],
    release: Optional[str],
    platform: str,
    index: Optional[str],
    as_json: bool,
) -> None:
    """Compare each CUDA build row's SASS and PTX lists with what its wheel's CUDA libraries
    hold: one wheel per release, its shared libraries streamed with range requests and only
    their fatbin headers read. The binary wins: a row that differs is an error (exit 1)."""
    from gpuenv.index.config import default_index_url
    from gpuenv.index.simple import file_sha256s, project_files
    from gpuenv.maint.verify import artifact_findings

    kb = load_knowledge_base()
    if framework and framework not in kb.frameworks:
        known = ", ".join(sorted(kb.frameworks))
        raise click.UsageError(f"unknown framework {framework!r}; known: {known}")
    if release and not framework:
        raise click.UsageError("--release needs --framework")
    if index and not index.startswith(("https://", "http://", "file://")):
        raise click.UsageError(f"--index {index!r}: expected an http(s):// or file:// URL")
    readings: list[Reading] = []

    def show(reading: Reading) -> None:
        readings.append(reading)
        if not as_json:
            _show_reading(reading)

    url = index or default_index_url()
    findings = artifact_findings(
        kb, url, project_files, file_sha256s, framework, release, platform, on_reading=show
    )
    errors = [f for f in findings if f.level == "error"]
    if as_json:
        emit_result(
            ctx,
            ok=not errors,
            exit_status=1,
            readings=[r.to_json() for r in readings],
            findings=[f.to_json() for f in findings],
        )
    else:
        for finding in findings:
            echo(shown(redact_text(str(finding))))  # it may quote --index's URL
        echo(
            f"{len(readings)} wheels read, {len(errors)} errors, {len(findings) - len(errors)} warnings"
        )
    if errors:
        raise SystemExit(1)


def _show_reading(reading: Reading) -> None:
    """One wheel's reading, for people: its libraries' arch lists and the verdict."""
    t = reading.target
    # the wheel's name is the index's, the members' the wheel's: shown escaped
    echo(shown(f"{reading.wheel} (sha256 {reading.sha256}; row {t.framework} {t.release})"))
    for lib in reading.libraries:
        echo(
            f"  {shown(lib.member)}: sass {', '.join(lib.sass) or '-'};"
            f" ptx {', '.join(lib.ptx) or '-'} ({lib.containers} fatbins"
            f"{'; a bundled NVIDIA library, not counted' if lib.vendored else ''})"
        )
        if (lib.sass_everywhere, lib.ptx_everywhere) != (lib.sass, lib.ptx):
            echo(
                f"    in every fatbin: sass {', '.join(lib.sass_everywhere) or '-'};"
                f" ptx {', '.join(lib.ptx_everywhere) or '-'}"
            )
    verdict = redact_text("; ".join(reading.differences()) or "matches the row")
    echo(
        f"  wheel: sass {', '.join(reading.sass) or '-'}; ptx {', '.join(reading.ptx) or '-'}: {verdict}"
    )
