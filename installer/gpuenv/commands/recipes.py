"""`gpuenv recipes check [--online]`: validate the knowledge base."""

from __future__ import annotations

import click

from gpuenv.commands.json_output import emit_result, json_option
from gpuenv.index.redact import redact_text
from gpuenv.recipes import load_knowledge_base
from gpuenv.recipes.check import check


@click.group("recipes")
def recipes() -> None:
    """The knowledge base (recipes/): check it, draft rows for a new release."""


@recipes.command("check")
@click.option(
    "--online", is_flag=True, help="Also compare with what the configured package index publishes."
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@json_option("Print the findings and counts as JSON.")
@click.pass_context
def check_command(ctx: click.Context, online: bool, strict: bool, as_json: bool) -> None:
    kb = load_knowledge_base()
    findings = check(kb)
    if online:
        from gpuenv.index.config import default_index_url
        from gpuenv.recipes.online import compare

        index = default_index_url()
        click.echo(f"comparing with {redact_text(index)}", err=True)
        findings += compare(kb, index)
    if not as_json:
        for finding in findings:
            click.echo(redact_text(str(finding)))  # a finding may quote the index's URL
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
            findings=[{"level": f.level, "where": f.where, "message": f.message} for f in findings],
            counts=counts,
        )
        if errors:
            raise SystemExit(1)
        return
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    click.echo(f"{len(errors)} errors, {len(findings) - len(errors)} warnings ({summary})")
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
    from gpuenv.recipes.draft import DraftError, draft

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
        click.echo(f"gpuenv: error: could not read the index: {redact_text(str(exc))}", err=True)
        raise SystemExit(5) from None
    click.echo(redact_text(text), nl=False)
