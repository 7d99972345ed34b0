"""`gpuenv cache`: where gpuenv keeps downloads and derived data, how big it is, emptying it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from gpuenv.commands.json_output import emit_result, json_option
from gpuenv.output.wrap import echo


@click.group("cache")
def cache_command() -> None:
    """gpuenv's cache: `dir`, `size`, `clean`. Everything in it can be downloaded or rebuilt again;
    environments live in the store, not here. The wheels gpuenv installs live in uv's cache
    (uv downloads and checks them), which `size` reports and `clean` leaves alone."""


@cache_command.command("dir")
@json_option("Print the folder as JSON.")
def dir_command(as_json: bool) -> None:
    """Print the cache folder (GPUENV_CACHE_DIR overrides it)."""
    from gpuenv.cache import cache_dir

    if as_json:
        emit_result(click.get_current_context(), path=str(cache_dir()))
        return
    echo(str(cache_dir()))


@cache_command.command("size")
@json_option("Print the sizes as JSON.")
def size_command(as_json: bool) -> None:
    """The cache's size, per kind of content, and the size of uv's cache (where the wheels are)."""
    from gpuenv.cache import cache_dir, cache_usage

    usage = cache_usage()
    uv_dir, uv_bytes = _uv_cache()
    if as_json:
        uv = {"path": str(uv_dir) if uv_dir else None, "bytes": uv_bytes}
        emit_result(
            click.get_current_context(),
            path=str(cache_dir()),
            bytes=usage,
            total_bytes=sum(usage.values()),
            uv=uv,
        )
        return
    for kind, size in usage.items():
        echo(f"{kind:<20} {size / 1e6:10.1f} MB")
    echo(f"{'total':<20} {sum(usage.values()) / 1e6:10.1f} MB  ({cache_dir()})")
    shown = f"{uv_bytes / 1e6:10.1f} MB" if uv_bytes is not None else f"{'?':>10}   "
    echo(f"{'uv (wheels)':<20} {shown}  ({uv_dir or 'uv did not say where'}; not gpuenv's)")


@cache_command.command("clean")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@json_option("Print what was (or would be) freed as JSON.")
def clean_command(dry_run: bool, as_json: bool) -> None:
    """Empty the cache: what gpuenv wrote there, in a folder with gpuenv's own tag. Environments
    and uv's cache are not touched."""
    from gpuenv.cache import cache_dir, clean_cache

    freed = clean_cache(dry_run=dry_run)
    if not dry_run:
        from gpuenv import dataclass_code

        dataclass_code.forget()  # not written again as this command exits
    if as_json:
        context = click.get_current_context()
        emit_result(context, path=str(cache_dir()), dry_run=dry_run, freed_bytes=freed)
        return
    verb = "would free" if dry_run else "freed"
    echo(f"{verb} {freed / 1e6:.1f} MB in {cache_dir()}")
    uv_dir, _ = _uv_cache(size=False)
    where = f" ({uv_dir})" if uv_dir else ""
    echo(f"uv's cache{where}, where the wheels are, was left alone: it is yours.")
    echo("  to empty it too: uv cache clean   (or `uv cache prune`: only unused entries)")


def _uv_cache(size: bool = True) -> tuple[Optional[Path], Optional[int]]:
    from gpuenv.cache import uv_cache, uv_cache_dir
    from gpuenv.uv.binary import UvMissingError, find_uv

    try:
        uv = find_uv()
    except (UvMissingError, OSError):  # no uv: gpuenv's own cache is still worth reporting
        return None, None
    return uv_cache(uv) if size else (uv_cache_dir(uv), None)
