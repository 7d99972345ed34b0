"""`gpuenv envs`: the environments gpuenv installed, what in the store is broken or left over,
removing one, and cleaning up leftovers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpuenv.commands import json_output
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.envs.inventory import StoreScan

_SHOWN = ("stack", "python", "lockfile", "lockfile_sha256", "accelerator", "backend")


@click.group("envs", invoke_without_command=True)
@json_output.json_option("Print the list as JSON.")
@click.pass_context
def envs_command(ctx: click.Context, as_json: bool) -> None:
    """List environments (name, stack, lockfile hash, Python, size), broken store entries and
    leftover version folders; `envs remove NAME` deletes one, `envs clean` the leftovers."""
    if ctx.invoked_subcommand is not None:
        return
    from gpuenv.envs.inventory import scan_store
    from gpuenv.output import shown

    scan = scan_store()
    if as_json:
        json_output.emit(_as_json(scan))
        return
    if not scan.envs:
        none = "no working environments" if scan.broken else "no environments yet"
        echo(f"{none}: `gpuenv install LOCKFILE --name NAME`")
    else:
        import sys

        from gpuenv.output.wrap import width

        click.echo(_table(scan.envs, width(sys.stdout)))
    for b in scan.broken:
        echo(shown(f"{b.name} BROKEN: {b.reason}  ({b.path})"))
    for left in scan.leftovers:
        echo(shown(f"(leftover) {left.reason} of {left.env}, {_size(left.size)}: {left.path}"))
    if scan.leftovers:
        echo("remove the leftovers with `gpuenv envs clean`")


_HEADER = ("NAME", "STACK", "ACCEL", "PYTHON", "SIZE", "VERIFIED")
_GAP = "  "


def _table(envs: list[Any], columns: int) -> str:
    """One row per environment, the stack column taking what the others leave of `columns`
    (wrapped within it); `--json` has every field, paths included."""
    import textwrap

    from gpuenv.output import shown  # names and metadata on disk are untrusted

    rows = [
        tuple(
            shown(cell)
            for cell in (
                e.name,
                ", ".join(f"{k} {v}" for k, v in (e.metadata.get("stack") or {}).items()) or "-",
                str(e.metadata.get("accelerator") or "-"),
                str(e.metadata.get("python") or "-"),
                _size(e.size),
                _verified(e.name, e.metadata),
            )
        )
        for e in envs
    ]
    fixed = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(len(_HEADER))]
    others = sum(fixed) - fixed[1] + len(_GAP) * (len(_HEADER) - 1)
    fixed[1] = max(16, min(fixed[1], columns - others))
    lines = []
    for row in [_HEADER, *rows]:
        stack = textwrap.wrap(row[1], fixed[1], break_long_words=False) or [""]
        for n, part in enumerate(stack):
            cells = row if n == 0 else ("", "", "", "", "", "")
            cells = (*cells[:1], part, *cells[2:])
            lines.append(_GAP.join(c.ljust(w) for c, w in zip(cells, fixed)).rstrip())
    return "\n".join(lines)


def _size(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB"


def _verified(name: str, metadata: dict[str, Any]) -> str:
    """When `gpuenv setup` last verified this very build (its lockfile), `FAILED` when that
    check failed, `-` when setup never verified it (`gpuenv verify -n NAME` checks any)."""
    from gpuenv.envs.errors import StoreInputError
    from gpuenv.setup.record import read_record

    try:
        record = read_record(name)
    except StoreInputError:  # a name the store holds but setup would not take
        return "-"
    if record is None or record.lockfile_sha256 != metadata.get("lockfile_sha256"):
        return "-"
    return record.verified_at[:10] or "-" if record.verified else "FAILED"


def _as_json(scan: StoreScan) -> list[dict[str, Any]]:
    """One list: working environments ("status": "ok"), then broken entries and leftovers."""
    return [
        *(
            {
                "name": e.name,
                "status": "ok",
                "path": str(e.path),
                "size": e.size,
                **{k: e.metadata.get(k) for k in _SHOWN},
            }
            for e in scan.envs
        ),
        *(
            {"name": b.name, "status": "broken", "path": str(b.path), "reason": b.reason}
            for b in scan.broken
        ),
        *(
            {
                "name": x.env,
                "status": "leftover",
                "path": str(x.path),
                "reason": x.reason,
                "size": x.size,
            }
            for x in scan.leftovers
        ),
    ]


@envs_command.command("remove")
@click.argument("name")
@json_output.json_option("Print what was removed as JSON.")
@click.pass_context
def remove_command(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove environment NAME: the link gpuenv made and the folders it built for it. Anything
    gpuenv did not make (an alias, a link elsewhere, a folder) is left alone."""
    import contextlib
    import os

    from gpuenv.envs.inventory import remove_environment
    from gpuenv.envs.jupyter import kernel_dir, remove_kernel
    from gpuenv.envs.store import EnvLocation
    from gpuenv.setup.record import record_path

    where = EnvLocation.named(name)
    removed = remove_environment(where)
    kernel = remove_kernel(name, os.environ)  # only this environment's, only if gpuenv wrote it
    with contextlib.suppress(OSError):
        record_path(name).unlink()  # what setup recorded for it: a new setup starts afresh
    if as_json or json_output.requested():  # `envs --json remove NAME` asks for JSON too
        json_output.emit_result(ctx, name=name, environment=str(where.link), removed=str(removed))
        return
    echo(f"removed {name} ({removed})")
    if kernel:
        echo(f"removed its Jupyter kernel ({kernel_dir(name, os.environ)})")


@envs_command.command("rollback")
@click.argument("name")
@json_output.json_option("Print which versions are now live and previous as JSON.")
@click.pass_context
def rollback_command(ctx: click.Context, name: str, as_json: bool) -> None:
    """Make the version the last install of NAME replaced live again (run it twice to undo)."""
    from gpuenv.envs.store import EnvLocation, read_metadata
    from gpuenv.envs.transaction import rollback
    from gpuenv.output import shown

    live, previous = rollback(EnvLocation.named(name))

    def stack(folder: Path) -> str:
        meta = read_metadata(folder)
        text = ", ".join(f"{k} {v}" for k, v in sorted((meta.get("stack") or {}).items()))
        return shown(text or "no frameworks")

    if as_json or json_output.requested():
        json_output.emit_result(ctx, name=name, live=str(live), previous=str(previous))
        return
    echo(f"{name} is {stack(live)} again ({live})")
    echo(f"  `gpuenv envs rollback {name}` again returns to {stack(previous)}")


@envs_command.command("clean")
@json_output.json_option("Print what was removed, kept and left alone as JSON.")
@click.pass_context
def clean_command(ctx: click.Context, as_json: bool) -> None:
    """Remove leftover version folders (unfinished builds, replaced versions) from the store."""
    from gpuenv.envs.inventory import remove_leftover, scan_store

    as_json = as_json or json_output.requested()  # `envs --json clean` asks for JSON too
    scan = scan_store(sizes=False)
    removed, kept = [], []
    for left in scan.leftovers:
        entry = {"name": left.env, "path": str(left.path), "reason": left.reason}
        if remove_leftover(left):
            removed.append(entry)
            if not as_json:
                echo(f"removed {left.reason} of {left.env}: {left.path}")
        else:
            kept.append({**entry, "why": f"an install of {left.env} is running"})
            echo(f"kept {left.path}: an install of {left.env} is running", err=True)
    work = _clean_workdirs(removed, as_json)
    if not scan.leftovers and not work and not as_json:
        echo("nothing to clean")
    for b in scan.broken:
        echo(f"not touched: {b.path} ({b.reason})", err=True)
    if as_json:
        broken = [{"name": b.name, "path": str(b.path), "reason": b.reason} for b in scan.broken]
        json_output.emit_result(ctx, removed=removed, kept=kept, not_touched=broken)


def _clean_workdirs(removed: list[dict[str, str]], as_json: bool) -> int:
    """The work folders of killed locks and installs; returns how many were found."""
    from gpuenv.envs.inventory import remove_stale_workdir
    from gpuenv.fs.workdir import stale_workdirs

    found = stale_workdirs()
    for path in found:
        if remove_stale_workdir(path):
            removed.append({"name": "", "path": str(path), "reason": "a killed run's work folder"})
            if not as_json:
                echo(f"removed a killed run's work folder: {path}")
    return len(found)
