"""`gpuenv lock --lab`'s output: a line per class as each is done (or a JSON row each, with
`--json`), then the count of failures. The work is gpuenv.lab.lock_classes'."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpuenv.commands import json_output
from gpuenv.commands.lock_json import absolute, check_json, failed_json, fallback, locked_json
from gpuenv.lab.lock_classes import ClassOutcome, LabSwitches, exit_status, lock_classes
from gpuenv.output.redact import redact_text
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.index.config import IndexConfig
    from gpuenv.recipes import KnowledgeBase

_LABELS = {"up_to_date": "ok     ", "missing": "MISSING", "stale": "STALE  "}


def lock_lab(
    lab_file: Path,
    class_names: tuple[str, ...],
    check: bool,
    kb: KnowledgeBase,
    indexes: IndexConfig,
    channels: tuple[str, ...],
    switches: LabSwitches,
) -> int:
    """Every class's lockfile (portable); with --check, which are stale. The exit status."""
    from gpuenv.lab.load import load_lab

    lab = load_lab(lab_file, kb)
    as_json, rows = json_output.requested(), []  # rows: each class's outcome, for --json

    def show(outcome: ClassOutcome) -> None:
        if as_json:
            rows.append(_row(outcome))
        _say(outcome, as_json)

    outcomes = lock_classes(
        lab,
        class_names,
        check=check,
        kb=kb,
        indexes=indexes,
        channels=channels,
        switches=switches,
        done=show,
    )
    status = exit_status(outcomes)
    failed = sum(1 for o in outcomes if not o.ok)
    if as_json:  # the exit status is the one returned below
        json_output.emit_result(
            click.get_current_context(),
            ok=not failed,
            exit_status=status,
            lab=absolute(lab_file),
            check=check,
            failed=failed,
            classes=rows,
        )
    if failed:
        what = "stale or missing" if check else "failed"
        echo(f"{failed} of {len(outcomes)} classes {what}", err=True)
    return status


def _say(outcome: ClassOutcome, as_json: bool) -> None:
    """The class's lines for people (stderr for warnings, notes and failures)."""
    name = outcome.name
    for line in outcome.fallback:
        echo(redact_text(f"warning: {name}: fallback: {line}"), err=True)
    if outcome.status == "failed":
        echo(redact_text(f"FAILED {name}: {outcome.message}"), err=True)
        return
    if outcome.result is None:  # checked
        if not as_json:
            echo(redact_text(f"{_LABELS[outcome.status]} {name}: {outcome.message}"))
        return
    for note in outcome.result.notes:
        echo(redact_text(f"note: {name}: {note}"), err=True)
    if not as_json:
        plan = outcome.result.plan
        stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
        echo(f"locked {name}: {stack}, Python {plan.python} -> {outcome.result.path}")


def _row(outcome: ClassOutcome) -> dict[str, Any]:
    if outcome.status == "failed":
        return failed_json(outcome.name, outcome.lockfile, outcome.message, outcome.exit_status)
    assert outcome.plan is not None
    if outcome.result is None:
        ok = outcome.status == "up_to_date"
        return {
            "class": outcome.name,
            "status": outcome.status,
            **check_json(ok, outcome.message, outcome.lockfile, outcome.plan),
        }
    return {
        "class": outcome.name,
        "status": "locked",
        **locked_json(outcome.result, "conda-lock", outcome.before_sha256),
        "fallback": fallback(outcome.ideal, outcome.plan),
        "notes": list(outcome.result.notes),
        "warnings": list(outcome.plan.warnings),
    }
