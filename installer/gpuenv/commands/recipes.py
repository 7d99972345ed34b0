"""`gpuenv recipes check [--online]`: validate the knowledge base."""

from __future__ import annotations

import click

from gpuenv.commands.json_output import emit_result, json_option
from gpuenv.recipes import load_knowledge_base
from gpuenv.recipes_check import check


@click.group("recipes")
def recipes() -> None:
    """The knowledge base (recipes/): check it."""


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
        from gpuenv.indexes import default_index_url
        from gpuenv.recipes_online import compare

        index = default_index_url()
        click.echo(f"comparing with {index}", err=True)
        findings += compare(kb, index)
    if not as_json:
        for finding in findings:
            click.echo(str(finding))
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
